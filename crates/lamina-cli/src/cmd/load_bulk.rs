//! `lamina load --bulk`: a dump loaded without the WAL and the memtable.
//!
//! Records are sorted in runs of bounded memory (`--memory`), merged into
//! tables and ingested in one step at the end (`engine::bulk`). The load is
//! all or nothing: a malformed record, a failed write or a failed ingest
//! leaves the database's records as they were, and the message says that
//! no record was loaded. Of a key repeated in the input (in one keyspace),
//! the last value wins, as with the ordinary load.

use crate::cmd::Ctx;
use crate::dumpfmt::{self, Format, Item, ReadError, RecordReader};
use crate::engine::bulk::{BulkDone, BulkSink, DEFAULT_MEMORY};
use crate::engine::{check_record, Db};
use crate::error::{CliError, CliResult, Exit};
use crate::progress::{thousands, Progress, Total};
use std::io::BufRead;

/// What a failed bulk load kept: nothing.
pub const KEPT_NOTHING: &str = "no record was loaded (a bulk load keeps all records or none)";

/// Runs `lamina load --bulk` on the opened `db`: into `keyspace` only, if
/// given (else the keyspaces the dump names), sorting `memory` bytes of
/// records at a time (default [`DEFAULT_MEMORY`]).
pub fn run(
    keyspace: Option<&str>,
    memory: Option<u64>,
    ctx: &Ctx,
    db: Db,
    source: Box<dyn BufRead>,
    format: Format,
    size: Option<u64>,
) -> CliResult<Exit> {
    let total = size.map_or(Total::Unknown, Total::Bytes);
    let mut progress = Progress::new(
        format!("load --bulk ({format})"),
        total,
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let memory = memory.map_or(DEFAULT_MEMORY, |m| usize::try_from(m).unwrap_or(usize::MAX));
    let mut sink = BulkSink::new(&db, memory);
    let mut reader = dumpfmt::reader(format, source);
    let read = gather(reader.as_mut(), &mut sink, keyspace, &mut progress);
    let done = match read {
        Ok(()) => {
            progress.note(&format!(
                "ingesting {} records in one step",
                thousands(sink.records())
            ));
            sink.finish().map_err(CliError::from)
        }
        Err(e) => {
            // Removes the sorted runs written so far.
            drop(sink);
            Err(e)
        }
    };
    let closed = db.close().map_err(CliError::from);
    outcome(done, closed, progress)
}

/// Adds every record of `reader` to `sink`, each section into its keyspace
/// (or all into `one_keyspace`, if given); stops at the first bad record
/// or failed write.
fn gather(
    reader: &mut dyn RecordReader,
    sink: &mut BulkSink,
    one_keyspace: Option<&str>,
    progress: &mut Progress,
) -> CliResult<()> {
    sink.set_keyspace(one_keyspace)?;
    let (mut key, mut value) = (Vec::new(), Vec::new());
    let mut last_bytes = 0;
    loop {
        match reader.next_item(&mut key, &mut value) {
            Ok(Item::Record) => {}
            Ok(Item::End) => return Ok(()),
            Ok(Item::Keyspace(name)) => {
                match (one_keyspace, name) {
                    (None, name) => sink.set_keyspace(name.as_deref())?,
                    (Some(one), Some(name)) if name != one => {
                        return Err(CliError::bad_input(format!(
                            "line {}: the dump holds keyspace {name:?}, and --keyspace \
                             loads into one keyspace; load without --keyspace to restore \
                             every keyspace as it was",
                            reader.line()
                        )))
                    }
                    (Some(_), _) => {}
                }
                continue;
            }
            Err(ReadError::Format(e)) => return Err(CliError::bad_input(e.to_string())),
            Err(ReadError::Io(e)) => return Err(CliError::io("reading input", e)),
        }
        if let Err(why) = check_record(&key, &value) {
            return Err(CliError::bad_input(format!(
                "record {}: {why}",
                sink.records() + 1
            )));
        }
        sink.add(&key, &value)?;
        let bytes = reader.bytes_read();
        progress.add(1, bytes - last_bytes);
        last_bytes = bytes;
    }
}

/// The result of a bulk load whose ingest ended with `done` and whose
/// database closed with `closed`, told on `progress`: what was kept, or
/// that nothing was.
fn outcome(
    done: CliResult<BulkDone>,
    closed: CliResult<()>,
    progress: Progress,
) -> CliResult<Exit> {
    match (done, closed) {
        (Ok(done), Ok(())) => {
            progress.note(&format!(
                "kept {} records ({} read; a repeated key keeps its last value), \
                 in {} ingested in one step, without the WAL",
                thousands(done.kept),
                thousands(done.records),
                if done.tables == 1 {
                    "1 table".to_string()
                } else {
                    format!("{} tables", done.tables)
                }
            ));
            progress.finish();
            Ok(Exit::Ok)
        }
        (Ok(_), Err(e)) => {
            // Ingested (durable); only the close failed.
            progress.abandon();
            Err(e.context_after("the records were loaded before the failure"))
        }
        (Err(e), _) => {
            progress.abandon();
            Err(CliError::new(
                e.exit,
                format!("{}; {KEPT_NOTHING}", e.message),
            ))
        }
    }
}
