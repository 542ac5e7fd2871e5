# Helpers the benchmark scripts source (`. "$(dirname "$0")/lib.sh"`).

# The median of the numbers on standard input (separated by spaces or newlines); "-" for none.
median() { tr ' ' '\n' | { grep . || true; } | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "-"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# The value (last field) of the row of `cellsim report` output $1 labelled exactly $2.
report_value() { printf '%s\n' "$1" | awk -v r="$2" 'index($0, r) == 1 && substr($0, length(r) + 1, 1) ~ /[ ]/ {print $NF}'; }
