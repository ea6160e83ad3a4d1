//! A run's cell trace streamed to a CSV file (`atmsim run --cell-trace FILE`), in
//! bounded memory (issue 44 item 5: a trace held whole took about 0.9 KB a row).
//!
//! Rows are booked in roughly, not exactly, time order (a buffer books a transmission
//! when the cell arrives, ahead of the instant; the kernel tells of some deliveries
//! late). So the trace is an external sort: every [`CHUNK`] rows the run hands its
//! rows over; they are sorted by time (stable), written as CSV lines to a spill file
//! beside the output, each line led by its instant; at the end the chunks are merged
//! by (instant, chunk), which is the order a stable sort of the whole trace gives.
//! Memory holds one chunk and one read buffer per chunk.
//!
//! Times are written exactly: decimal seconds from the integer picoseconds
//! (`0.000496940603`), not a float's shortest representation.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use atmsim_models::observers::cell_trace::{Spill, TraceRow};

use crate::run::{TraceNames, TraceRowOut};

/// Rows held in memory before they are sorted and written out.
pub const CHUNK: usize = 1 << 16;
/// Chunks merged at once; more are merged in passes.
const FAN_IN: usize = 256;

/// The CSV header (the columns of `Result.cell_trace`).
pub const HEADER: &str = "time_s,event,component,port,cause,unit,octets,vc,source,seq,pdu_cell,born_s,flags,carries";

/// Picoseconds as exact decimal seconds (`1.5`, `0.000496940603`, `0.0`).
pub fn exact_seconds(ps: u64) -> String {
    const PS: u64 = 1_000_000_000_000;
    let (s, frac) = (ps / PS, ps % PS);
    if frac == 0 {
        return format!("{s}.0");
    }
    let digits = format!("{frac:012}");
    format!("{s}.{}", digits.trim_end_matches('0'))
}

/// Appends `field` as a CSV field: quoted (quotes doubled) when it holds a comma, a
/// quote or a line break, as Python's csv module and pandas write it.
fn field(out: &mut String, field: &str) {
    if field.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

/// One row as a CSV line (no line end).
pub fn csv_line(r: &TraceRowOut, out: &mut String) {
    out.push_str(&exact_seconds(r.time_ps));
    for f in [r.event, &r.component, &r.port, r.cause, r.unit] {
        out.push(',');
        field(out, f);
    }
    out.push_str(&format!(",{}", r.octets));
    for f in [&r.vc, &r.source] {
        out.push(',');
        field(out, f);
    }
    out.push_str(&format!(",{},{},{}", r.seq, r.pdu_cell, exact_seconds(r.born_ps)));
    for f in [&r.flags, &r.carries] {
        out.push(',');
        field(out, f);
    }
}

/// Where a streamed trace's chunks are: (offset, length) in the spill file.
#[derive(Debug)]
struct Spilled {
    path: PathBuf,
    file: BufWriter<File>,
    chunks: Vec<(u64, u64)>,
    at: u64,
}

/// A trace being streamed to `out`: the spill its run hands rows to, and what merges
/// the chunks into the CSV at the end.
#[derive(Debug)]
pub struct TraceFile {
    out: PathBuf,
    spilled: Arc<Mutex<Spilled>>,
    /// Chunks merged at once ([`FAN_IN`]; smaller in tests of the merge passes).
    fan_in: usize,
}

fn io_err(path: &Path, e: std::io::Error) -> String {
    format!("{}: cannot write the cell trace: {e}", path.display())
}

impl TraceFile {
    /// Opens the spill file beside `out` (in the same directory, so a full disk or a
    /// missing directory shows before the run).
    pub fn create(out: &Path) -> Result<TraceFile, String> {
        let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "trace".into());
        let path = out.with_file_name(format!(".{name}.{}.spill", std::process::id()));
        let file = File::create(&path).map_err(|e| io_err(out, e))?;
        // The spill is a dot-file beside the output, removed after the merge and when
        // the run fails (`Drop`).
        Ok(TraceFile { out: out.to_path_buf(), spilled: Arc::new(Mutex::new(Spilled { path, file: BufWriter::new(file), chunks: Vec::new(), at: 0 })), fan_in: FAN_IN })
    }

    /// The spill the run's trace hands its chunks to; rows are named by `names`.
    pub fn spill(&self, names: TraceNames) -> Spill {
        let spilled = Arc::clone(&self.spilled);
        Box::new(move |rows: &mut Vec<TraceRow>| {
            let mut s = spilled.lock().map_err(|_| "the cell trace's writer failed earlier".to_string())?;
            rows.sort_by_key(|r| r.time);
            let mut text = String::new();
            for r in rows.iter() {
                let row = names.row(r);
                text.push_str(&r.time.0.to_string());
                text.push(' ');
                csv_line(&row, &mut text);
                text.push('\n');
            }
            let out = s.path.clone();
            s.file.write_all(text.as_bytes()).map_err(|e| io_err(&out, e))?;
            let at = s.at;
            s.chunks.push((at, text.len() as u64));
            s.at += text.len() as u64;
            Ok(())
        })
    }

    /// Merges the chunks into the CSV file and removes the spill.
    pub fn finish(self) -> Result<(), String> {
        let mut s = self.spilled.lock().map_err(|_| "the cell trace's writer failed".to_string())?;
        let spill = s.path.clone();
        let result = (|| {
            s.file.flush().map_err(|e| io_err(&self.out, e))?;
            let mut chunks = std::mem::take(&mut s.chunks);
            let mut source = spill.clone();
            let mut pass = 0;
            // Merge passes while there are more chunks than one merge opens.
            while chunks.len() > self.fan_in {
                pass += 1;
                let next_path = spill.with_extension(format!("spill{pass}"));
                let mut next = BufWriter::new(File::create(&next_path).map_err(|e| io_err(&self.out, e))?);
                let mut merged = Vec::new();
                let mut at = 0u64;
                for group in chunks.chunks(self.fan_in) {
                    let n = merge(&source, group, &mut next, true).map_err(|e| io_err(&self.out, e))?;
                    merged.push((at, n));
                    at += n;
                }
                next.flush().map_err(|e| io_err(&self.out, e))?;
                if source != spill {
                    let _ = std::fs::remove_file(&source);
                }
                source = next_path;
                chunks = merged;
            }
            let mut out = BufWriter::new(File::create(&self.out).map_err(|e| io_err(&self.out, e))?);
            writeln!(out, "{HEADER}").map_err(|e| io_err(&self.out, e))?;
            merge(&source, &chunks, &mut out, false).map_err(|e| io_err(&self.out, e))?;
            out.flush().map_err(|e| io_err(&self.out, e))?;
            if source != spill {
                let _ = std::fs::remove_file(&source);
            }
            Ok(())
        })();
        let _ = std::fs::remove_file(&spill);
        result
    }
}

impl Drop for TraceFile {
    fn drop(&mut self) {
        // A run that failed leaves no spill behind.
        if let Ok(s) = self.spilled.lock() {
            let _ = std::fs::remove_file(&s.path);
        }
    }
}

/// Merges sorted chunks of `source` (lines `INSTANT CSV`) by (instant, chunk) into
/// `out`, keeping the instants (`keep_key`, for a further pass) or not; returns the
/// bytes written.
fn merge(source: &Path, chunks: &[(u64, u64)], out: &mut impl Write, keep_key: bool) -> std::io::Result<u64> {
    let mut readers = Vec::with_capacity(chunks.len());
    for &(offset, len) in chunks {
        let mut f = File::open(source)?;
        f.seek(SeekFrom::Start(offset))?;
        readers.push(BufReader::with_capacity(1 << 15, f).take(len));
    }
    let mut heads: Vec<String> = vec![String::new(); readers.len()];
    let mut heap = BinaryHeap::new();
    let key = |line: &str| -> std::io::Result<u64> {
        line.split_once(' ')
            .and_then(|(t, _)| t.parse().ok())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "a spilled trace line without its instant"))
    };
    for (i, r) in readers.iter_mut().enumerate() {
        if r.read_line(&mut heads[i])? > 0 {
            heap.push(Reverse((key(&heads[i])?, i)));
        }
    }
    let mut written = 0u64;
    while let Some(Reverse((_, i))) = heap.pop() {
        let line = std::mem::take(&mut heads[i]);
        let text = if keep_key { line.as_str() } else { line.split_once(' ').map_or("", |(_, rest)| rest) };
        out.write_all(text.as_bytes())?;
        written += text.len() as u64;
        if readers[i].read_line(&mut heads[i])? > 0 {
            heap.push(Reverse((key(&heads[i])?, i)));
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact_decimals_of_the_picoseconds() {
        assert_eq!(exact_seconds(0), "0.0");
        assert_eq!(exact_seconds(1_500_000_000_000), "1.5");
        assert_eq!(exact_seconds(496_940_603), "0.000496940603");
        assert_eq!(exact_seconds(1), "0.000000000001");
        assert_eq!(exact_seconds(u64::MAX), "18446744.073709551615");
    }

    #[test]
    fn fields_are_quoted_as_csv_wants() {
        let mut s = String::new();
        field(&mut s, "eop,clp");
        field(&mut s, "a \"b\"");
        field(&mut s, "plain");
        assert_eq!(s, "\"eop,clp\"\"a \"\"b\"\"\"plain");
    }

    #[test]
    fn merge_passes_give_what_one_merge_gives() {
        // Seven chunks merged two at a time (three passes) against a stable sort.
        use atmsim_models::cell::{Cell, Msg};
        use atmsim_models::observers::cell_trace::{CellTrace, TraceFilter};
        let dir = std::env::temp_dir().join(format!("atmsim-passes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("t.csv");
        let names = TraceNames::for_test(&["a", "b"], 2);
        let mut f = TraceFile::create(&out).unwrap();
        f.fan_in = 2;
        let mut trace = CellTrace::new(TraceFilter::default());
        trace.spill_to(3, f.spill(names.clone()));
        let mut store = atmsim_models::Store::default();
        store.observers.subscribe(Box::new(trace));
        let mut booked = Vec::new();
        for k in 0..20u64 {
            // out of time order within and across chunks, with ties
            let t = atmsim_kernel::SimTime((k * 7) % 5);
            let cell = Cell::plain(t, (k % 2) as u32, 1, k as u32);
            store.arrived(t, (k % 2) as u32, 0, &Msg::Cell(cell));
            booked.push((t, k));
        }
        store.observers.take::<CellTrace>().unwrap().flush().unwrap();
        f.finish().unwrap();
        booked.sort_by_key(|b| b.0);
        let text = std::fs::read_to_string(&out).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(HEADER));
        let seqs: Vec<u64> = lines.map(|l| l.split(',').nth(9).unwrap().parse().unwrap()).collect();
        assert_eq!(seqs, booked.iter().map(|b| b.1).collect::<Vec<_>>());
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("t.csv")], "no spill file left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn chunks_merge_as_a_stable_sort_of_the_whole() {
        // Three sorted chunks with ties across them: ties keep chunk order.
        let dir = std::env::temp_dir().join(format!("atmsim-merge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("spill");
        let parts = ["1 a\n3 b\n", "1 c\n2 d\n3 e\n", "0 f\n3 g\n"];
        std::fs::write(&src, parts.concat()).unwrap();
        let mut at = 0;
        let chunks: Vec<(u64, u64)> = parts
            .iter()
            .map(|p| {
                let c = (at, p.len() as u64);
                at += p.len() as u64;
                c
            })
            .collect();
        let mut out = Vec::new();
        merge(&src, &chunks, &mut out, false).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "f\na\nc\nd\nb\ne\ng\n");
        let mut keyed = Vec::new();
        merge(&src, &chunks, &mut keyed, true).unwrap();
        assert_eq!(String::from_utf8(keyed).unwrap(), "0 f\n1 a\n1 c\n2 d\n3 b\n3 e\n3 g\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
