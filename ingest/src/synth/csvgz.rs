//! Writing one GCD table as `part-NNNNN-of-MMMMM.csv.gz` files, split by time, compressed on a
//! background thread per table; plus the row formatting helpers the generator uses.
//!
//! Rows must arrive in nondecreasing part order (the generator emits them in time order). Every
//! part file exists at the end, empty parts included, as in the real trace layout. Memory: the
//! row buffer plus at most [`QUEUE_DEPTH`] buffers in flight.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, bounded};
use flate2::Compression;
use flate2::write::GzEncoder;

use crate::codes::TRACE_START_US;
use crate::error::{IngestError, Result};

/// Buffers queued to a compression thread.
const QUEUE_DEPTH: usize = 4;
/// Bytes of CSV text buffered before handing them to the compression thread.
const FLUSH_BYTES: usize = 1 << 20;

enum Message {
    Rows(Vec<u8>),
    OpenPart(u32),
}

/// A table being written as time-sharded gzip part files.
pub struct TableWriter {
    dir: PathBuf,
    parts: u32,
    part_len_us: i64,
    current: u32,
    buf: Vec<u8>,
    tx: Option<Sender<Message>>,
    handle: Option<JoinHandle<Result<()>>>,
}

fn part_path(dir: &Path, part: u32, parts: u32) -> PathBuf {
    dir.join(format!("part-{part:05}-of-{parts:05}.csv.gz"))
}

fn compress_loop(dir: PathBuf, parts: u32, rx: Receiver<Message>) -> Result<()> {
    let open = |part: u32| -> Result<GzEncoder<BufWriter<File>>> {
        let path = part_path(&dir, part, parts);
        let file = File::create(&path).map_err(IngestError::io(&path))?;
        Ok(GzEncoder::new(BufWriter::new(file), Compression::fast()))
    };
    let close = |enc: GzEncoder<BufWriter<File>>, part: u32| -> Result<()> {
        let path = part_path(&dir, part, parts);
        enc.finish()
            .and_then(|mut w| w.flush())
            .map_err(IngestError::io(&path))
    };
    let mut part = 0;
    let mut enc = open(part)?;
    for msg in rx {
        match msg {
            Message::Rows(rows) => enc
                .write_all(&rows)
                .map_err(IngestError::io(part_path(&dir, part, parts)))?,
            Message::OpenPart(next) => {
                while part < next {
                    close(std::mem::replace(&mut enc, open(part + 1)?), part)?;
                    part += 1;
                }
            }
        }
    }
    while part + 1 < parts {
        close(std::mem::replace(&mut enc, open(part + 1)?), part)?;
        part += 1;
    }
    close(enc, part)
}

impl TableWriter {
    /// Creates `root/<table>/` and starts its compression thread. `parts` files split the trace
    /// window into equal spans of `part_len_us` (rows at t = 0 go to part 0, late rows to the
    /// last).
    pub fn new(root: &Path, table: &str, parts: u32, part_len_us: i64) -> Result<TableWriter> {
        let dir = root.join(table);
        fs::create_dir_all(&dir).map_err(IngestError::io(&dir))?;
        let (tx, rx) = bounded(QUEUE_DEPTH);
        let thread_dir = dir.clone();
        let handle = std::thread::spawn(move || compress_loop(thread_dir, parts, rx));
        Ok(TableWriter {
            dir,
            parts,
            part_len_us,
            current: 0,
            buf: Vec::with_capacity(FLUSH_BYTES + 4096),
            tx: Some(tx),
            handle: Some(handle),
        })
    }

    /// The part a row at `time_us` belongs to.
    fn part_of(&self, time_us: i64) -> u32 {
        let offset = (time_us - TRACE_START_US).max(0) / self.part_len_us.max(1);
        (offset.min(self.parts as i64 - 1)) as u32
    }

    /// The row buffer to append one CSV line (with its newline) for a row at `time_us`.
    pub fn row(&mut self, time_us: i64) -> Result<&mut Vec<u8>> {
        let part = self.part_of(time_us).max(self.current);
        if part != self.current {
            self.send_rows()?;
            self.send(Message::OpenPart(part))?;
            self.current = part;
        } else if self.buf.len() >= FLUSH_BYTES {
            self.send_rows()?;
        }
        Ok(&mut self.buf)
    }

    fn send_rows(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let rows = std::mem::replace(&mut self.buf, Vec::with_capacity(FLUSH_BYTES + 4096));
        self.send(Message::Rows(rows))
    }

    fn send(&mut self, msg: Message) -> Result<()> {
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(msg).is_ok());
        if sent { Ok(()) } else { self.join() }
    }

    fn join(&mut self) -> Result<()> {
        self.tx = None;
        match self.handle.take() {
            Some(h) => h.join().unwrap_or_else(|_| {
                Err(IngestError::Config(format!(
                    "compression thread for {} panicked",
                    self.dir.display()
                )))
            }),
            None => Ok(()),
        }
    }

    /// Flushes the last rows, closes every part (creating empty ones) and reports thread errors.
    pub fn finish(mut self) -> Result<()> {
        self.send_rows()?;
        self.join()
    }
}

impl Drop for TableWriter {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// Appends an integer and a comma.
pub fn int(buf: &mut Vec<u8>, v: impl itoa::Integer) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    buf.push(b',');
}

/// Appends `v` with at most `decimals` decimals (trailing zeros dropped) and a comma.
pub fn decimal(buf: &mut Vec<u8>, v: f64, decimals: u32) {
    let scale = 10u64.pow(decimals);
    let units = (v.max(0.0) * scale as f64).round() as u64;
    let (whole, mut frac) = (units / scale, units % scale);
    buf.extend_from_slice(itoa::Buffer::new().format(whole).as_bytes());
    if frac != 0 {
        let mut digits = decimals as usize;
        while frac % 10 == 0 {
            frac /= 10;
            digits -= 1;
        }
        buf.push(b'.');
        let text = itoa::Buffer::new().format(frac).to_owned();
        buf.extend(std::iter::repeat_n(b'0', digits - text.len()));
        buf.extend_from_slice(text.as_bytes());
    }
    buf.push(b',');
}

/// Decimals that keep 4 significant digits of `v` (at most 9).
fn sig4_decimals(v: f64) -> u32 {
    let magnitude = if v > 0.0 { v.log10().floor() as i32 } else { 0 };
    (3 - magnitude).clamp(0, 9) as u32
}

/// Appends `v` with 4 significant digits, as the trace writes normalised amounts (`0.0004044`).
pub fn sig4(buf: &mut Vec<u8>, v: f64) {
    decimal(buf, v, sig4_decimals(v));
}

/// `v` rounded to the value [`sig4`] writes, so the generator places exactly what it records.
pub fn round_sig4(v: f64) -> f64 {
    let scale = 10f64.powi(sig4_decimals(v) as i32);
    (v * scale).round() / scale
}

/// Appends a string and a comma.
pub fn text(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(s.as_bytes());
    buf.push(b',');
}

/// Appends an empty field.
pub fn empty(buf: &mut Vec<u8>) {
    buf.push(b',');
}

/// Replaces the trailing comma of the row with a newline.
pub fn end_row(buf: &mut [u8]) {
    if let Some(last) = buf.last_mut() {
        *last = b'\n';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_short_and_exact() {
        let mut b = Vec::new();
        decimal(&mut b, 0.5, 4);
        decimal(&mut b, 0.0125, 4);
        decimal(&mut b, 0.000_404_4, 7);
        decimal(&mut b, 1.0, 4);
        decimal(&mut b, 0.0, 4);
        int(&mut b, 42u64);
        sig4(&mut b, 0.000_404_437);
        sig4(&mut b, 0.012_549);
        sig4(&mut b, 1.645_1);
        sig4(&mut b, 0.0);
        end_row(&mut b);
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "0.5,0.0125,0.0004044,1,0,42,0.0004044,0.01255,1.645,0\n"
        );
    }
}
