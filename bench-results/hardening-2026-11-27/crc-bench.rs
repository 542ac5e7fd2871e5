use rayon::prelude::*;
use std::io::Read;
fn crc(path: &str) -> u32 {
    let mut f = std::fs::File::open(path).unwrap();
    let (mut h, mut buf) = (crc32fast::Hasher::new(), vec![0u8; 1 << 20]);
    loop { let n = f.read(&mut buf).unwrap(); if n == 0 { break; } h.update(&buf[..n]); }
    h.finalize()
}
fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let t = std::time::Instant::now();
    let s: u64 = paths.iter().map(|p| crc(p) as u64).sum();
    println!("read serial {:.3} s ({s})", t.elapsed().as_secs_f64());
    let t = std::time::Instant::now();
    let s: u64 = paths.par_iter().map(|p| crc(p) as u64).sum();
    println!("read parallel {:.3} s ({s})", t.elapsed().as_secs_f64());
}
