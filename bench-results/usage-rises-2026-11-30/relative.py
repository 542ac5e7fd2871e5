"""Table 2's other reading, counted apart from the per-minute `nodes/` samples: nodes whose CPU
or memory use rose by more than N % of its own level (used_now / used_before - 1 > N / 100),
average / peak per minute over every tick after the first."""
import sys
import duckdb

out, runs = sys.argv[1], sys.argv[2:]
for run in runs:
    con = duckdb.connect()
    con.execute(f"""create table d as
        select tick::bigint as tick, lag(tick::bigint) over w as before,
               cpu_used / nullif(lag(cpu_used) over w, 0) - 1 as rc,
               mem_used / nullif(lag(mem_used) over w, 0) - 1 as rm
        from read_parquet('{out}/{run}/nodes/*.parquet')
        window w as (partition by machine_id order by tick)""")
    ticks = con.execute("select count(distinct tick) - 1 from d").fetchone()[0]
    cells = []
    for p in (5, 10, 15, 20, 25):
        per = con.execute(f"""select count(*) filter (where rc > {p / 100} or rm > {p / 100})
            from d where before = tick - 1 group by tick""").fetchall()
        cells.append(f"> {p} %: {sum(n for (n,) in per) / ticks:.0f} / {max(n for (n,) in per)}")
    print(f"{run}: " + ", ".join(cells))
