//! SQLite through `rusqlite` (its bundled SQLite): one table
//! `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`, `journal_mode=WAL`,
//! `synchronous=FULL` (every commit syncs the WAL), a connection per
//! thread with a 10 s busy timeout, `BEGIN IMMEDIATE ... COMMIT` per
//! transaction; `SQLITE_BUSY` (a writer that waited out the timeout) is a
//! conflict, rolled back and run again.

use super::{add, Engine, Sums, Txn, Worker, RECORD};
use rusqlite::{params, Connection, ErrorCode, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The database file, and the first connection (loads and sums).
pub struct Sqlite {
    path: PathBuf,
    main: Mutex<Connection>,
}

fn err(e: rusqlite::Error) -> String {
    format!("sqlite: {e}")
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// A connection with the run's settings.
fn connect(path: &Path) -> Result<Connection, String> {
    let c = Connection::open(path).map_err(err)?;
    c.busy_timeout(Duration::from_secs(10)).map_err(err)?;
    let mode: String = c
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .map_err(err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(format!("sqlite: journal_mode is {mode}, not wal"));
    }
    c.execute_batch("PRAGMA synchronous=FULL").map_err(err)?;
    Ok(c)
}

impl Sqlite {
    /// Opens (creating) `tpcb.sqlite` in `dir`.
    pub fn open(dir: &Path) -> Result<Sqlite, String> {
        let path = dir.join("tpcb.sqlite");
        let c = connect(&path)?;
        c.execute_batch("CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
            .map_err(err)?;
        Ok(Sqlite {
            path,
            main: Mutex::new(c),
        })
    }

    fn main(&self) -> Result<std::sync::MutexGuard<'_, Connection>, String> {
        self.main
            .lock()
            .map_err(|_| "sqlite: a thread panicked".to_string())
    }
}

impl Engine for Sqlite {
    fn load(&self, rows: &[(Vec<u8>, [u8; RECORD])]) -> Result<(), String> {
        let mut c = self.main()?;
        let tx = c
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        {
            let mut put = tx
                .prepare_cached("INSERT OR REPLACE INTO kv(k, v) VALUES (?1, ?2)")
                .map_err(err)?;
            for (k, v) in rows {
                put.execute(params![k, &v[..]]).map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }

    fn worker(&self) -> Result<Box<dyn Worker + '_>, String> {
        Ok(Box::new(SqliteWorker {
            c: connect(&self.path)?,
        }))
    }

    fn sums(&self) -> Result<Sums, String> {
        let c = self.main()?;
        let mut st = c.prepare("SELECT k, v FROM kv ORDER BY k").map_err(err)?;
        let mut rows = st.query([]).map_err(err)?;
        let mut sums = Sums::default();
        while let Some(r) = rows.next().map_err(err)? {
            let k: Vec<u8> = r.get(0).map_err(err)?;
            let v: Vec<u8> = r.get(1).map_err(err)?;
            sums.add(&k, &v)?;
        }
        Ok(sums)
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        let c = self
            .main
            .into_inner()
            .map_err(|_| "sqlite: a thread panicked".to_string())?;
        c.close().map_err(|(_, e)| err(e))
    }
}

struct SqliteWorker {
    c: Connection,
}

impl SqliteWorker {
    /// One attempt: Ok(true) committed, Ok(false) busy (rolled back).
    fn attempt(&mut self, t: &Txn) -> Result<bool, String> {
        let body = |c: &Connection| -> Result<Result<(), String>, rusqlite::Error> {
            c.execute_batch("BEGIN IMMEDIATE")?;
            let mut get = c.prepare_cached("SELECT v FROM kv WHERE k = ?1")?;
            let mut put = c.prepare_cached("INSERT OR REPLACE INTO kv(k, v) VALUES (?1, ?2)")?;
            for k in [&t.account, &t.branch, &t.teller] {
                let v: Option<Vec<u8>> = get.query_row([&k[..]], |r| r.get(0)).optional()?;
                match add(v.as_deref(), t.delta, "a row") {
                    Ok(row) => put.execute(params![&k[..], &row[..]])?,
                    Err(m) => return Ok(Err(m)),
                };
            }
            put.execute(params![&t.history[..], &t.history_row[..]])?;
            c.execute_batch("COMMIT")?;
            Ok(Ok(()))
        };
        match body(&self.c) {
            Ok(Ok(())) => Ok(true),
            Ok(Err(m)) => {
                let _ = self.c.execute_batch("ROLLBACK");
                Err(m)
            }
            Err(e) if is_busy(&e) => {
                if !self.c.is_autocommit() {
                    let _ = self.c.execute_batch("ROLLBACK");
                }
                Ok(false)
            }
            Err(e) => Err(err(e)),
        }
    }
}

impl Worker for SqliteWorker {
    fn run(&mut self, t: &Txn) -> Result<u64, String> {
        let mut conflicts = 0;
        while !self.attempt(t)? {
            conflicts += 1;
        }
        Ok(conflicts)
    }
}
