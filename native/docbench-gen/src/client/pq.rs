//! PostgreSQL through libpq, opened at run time (dlopen) from the paths the configuration
//! lists, so the build needs no PostgreSQL headers and the same library as psycopg's can be
//! used. The calls are pgbench's: prepared statements sent asynchronously.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};

use crate::client::session::{Session, STATEMENT_READ};

type PGconn = c_void;
type PGresult = c_void;
/// PQsendQueryPrepared(conn, name, nParams, values, lengths, formats, resultFormat).
type SendQueryPrepared = unsafe extern "C" fn(
    *mut PGconn,
    *const c_char,
    c_int,
    *const *const c_char,
    *const c_int,
    *const c_int,
    c_int,
) -> c_int;

/// The libpq calls pgbench makes, resolved with dlsym.
pub struct Pq {
    connectdb: unsafe extern "C" fn(*const c_char) -> *mut PGconn,
    status: unsafe extern "C" fn(*const PGconn) -> c_int,
    error_message: unsafe extern "C" fn(*const PGconn) -> *const c_char,
    prepare: unsafe extern "C" fn(*mut PGconn, *const c_char, *const c_char, c_int, *const u32) -> *mut PGresult,
    result_status: unsafe extern "C" fn(*const PGresult) -> c_int,
    result_error_message: unsafe extern "C" fn(*const PGresult) -> *const c_char,
    clear: unsafe extern "C" fn(*mut PGresult),
    set_nonblocking: unsafe extern "C" fn(*mut PGconn, c_int) -> c_int,
    socket: unsafe extern "C" fn(*const PGconn) -> c_int,
    send_query_prepared: SendQueryPrepared,
    flush: unsafe extern "C" fn(*mut PGconn) -> c_int,
    consume_input: unsafe extern "C" fn(*mut PGconn) -> c_int,
    is_busy: unsafe extern "C" fn(*mut PGconn) -> c_int,
    get_result: unsafe extern "C" fn(*mut PGconn) -> *mut PGresult,
    ntuples: unsafe extern "C" fn(*const PGresult) -> c_int,
    cmd_tuples: unsafe extern "C" fn(*mut PGresult) -> *const c_char,
    finish: unsafe extern "C" fn(*mut PGconn),
}

const PGRES_COMMAND_OK: c_int = 1;
const PGRES_TUPLES_OK: c_int = 2;
const CONNECTION_OK: c_int = 0;

impl Pq {
    /// The first of `candidates` that opens (paths or names for dlopen).
    pub fn open(candidates: &[String]) -> Result<Pq, String> {
        let mut tried = Vec::new();
        for path in candidates {
            let name = CString::new(path.as_str()).map_err(|e| e.to_string())?;
            let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if handle.is_null() {
                tried.push(path.clone());
                continue;
            }
            return unsafe { Pq::resolve(handle) };
        }
        Err(format!("no libpq could be opened (tried {})", tried.join(", ")))
    }

    /// # Safety
    /// `handle` is a libpq opened with dlopen: each symbol is the function of its field's type.
    unsafe fn resolve(handle: *mut c_void) -> Result<Pq, String> {
        /// The address of `name` as a function pointer of type `F`.
        unsafe fn symbol<F: Copy>(handle: *mut c_void, name: &str) -> Result<F, String> {
            assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
            let symbol = CString::new(name).map_err(|e| e.to_string())?;
            let address = libc::dlsym(handle, symbol.as_ptr());
            if address.is_null() {
                return Err(format!("libpq has no {name}"));
            }
            Ok(std::mem::transmute_copy::<*mut c_void, F>(&address))
        }
        macro_rules! symbol {
            ($name:literal) => {
                symbol(handle, $name)?
            };
        }
        Ok(Pq {
            connectdb: symbol!("PQconnectdb"),
            status: symbol!("PQstatus"),
            error_message: symbol!("PQerrorMessage"),
            prepare: symbol!("PQprepare"),
            result_status: symbol!("PQresultStatus"),
            result_error_message: symbol!("PQresultErrorMessage"),
            clear: symbol!("PQclear"),
            set_nonblocking: symbol!("PQsetnonblocking"),
            socket: symbol!("PQsocket"),
            send_query_prepared: symbol!("PQsendQueryPrepared"),
            flush: symbol!("PQflush"),
            consume_input: symbol!("PQconsumeInput"),
            is_busy: symbol!("PQisBusy"),
            get_result: symbol!("PQgetResult"),
            ntuples: symbol!("PQntuples"),
            cmd_tuples: symbol!("PQcmdTuples"),
            finish: symbol!("PQfinish"),
        })
    }
}

fn text_of(pointer: *const c_char) -> String {
    if pointer.is_null() {
        return String::new();
    }
    unsafe { CStr::from_ptr(pointer) }.to_string_lossy().trim().to_string()
}

/// One PostgreSQL connection with the three statements prepared, driven asynchronously.
pub struct PgSession {
    pq: &'static Pq,
    conn: *mut PGconn,
    reading: bool,
    pending: *mut PGresult,
}

const STATEMENT_NAMES: [&[u8]; 3] = [b"docbench_read\0", b"docbench_update\0", b"docbench_insert\0"];
const STATEMENT_KEYS: [&str; 3] = ["read", "update", "insert"];

impl PgSession {
    pub fn connect(pq: &'static Pq, conninfo: &str, statements: &HashMap<String, String>) -> Result<PgSession, String> {
        let info = CString::new(conninfo).map_err(|e| e.to_string())?;
        let conn = unsafe { (pq.connectdb)(info.as_ptr()) };
        let session = PgSession { pq, conn, reading: false, pending: std::ptr::null_mut() };
        if conn.is_null() || unsafe { (pq.status)(conn) } != CONNECTION_OK {
            return Err(format!("connection failed: {}", text_of(unsafe { (pq.error_message)(conn) })));
        }
        for (number, key) in STATEMENT_KEYS.iter().enumerate() {
            let Some(sql) = statements.get(*key) else { continue };
            let sql = CString::new(sql.as_str()).map_err(|e| e.to_string())?;
            let result = unsafe {
                (pq.prepare)(conn, STATEMENT_NAMES[number].as_ptr() as *const c_char, sql.as_ptr(), 0, std::ptr::null())
            };
            let status = unsafe { (pq.result_status)(result) };
            let message = text_of(unsafe { (pq.result_error_message)(result) });
            unsafe { (pq.clear)(result) };
            if status != PGRES_COMMAND_OK {
                return Err(format!("prepare {key}: {message}"));
            }
        }
        unsafe { (pq.set_nonblocking)(conn, 1) };
        Ok(session)
    }

    fn flush_rest(&mut self) -> Result<(), String> {
        loop {
            match unsafe { (self.pq.flush)(self.conn) } {
                0 => return Ok(()),
                1 => {
                    let mut fds = libc::pollfd { fd: self.fd(), events: libc::POLLOUT, revents: 0 };
                    unsafe { libc::poll(&mut fds, 1, 1000) };
                }
                _ => return Err(self.connection_error()),
            }
        }
    }

    fn connection_error(&self) -> String {
        text_of(unsafe { (self.pq.error_message)(self.conn) })
    }
}

impl Session for PgSession {
    fn fd(&self) -> c_int {
        unsafe { (self.pq.socket)(self.conn) }
    }

    fn send(&mut self, statement: usize, params: &[&[u8]]) -> Result<(), String> {
        let values: [*const c_char; 3] =
            std::array::from_fn(|i| params.get(i).map_or(std::ptr::null(), |p| p.as_ptr() as *const c_char));
        let sent = unsafe {
            (self.pq.send_query_prepared)(
                self.conn,
                STATEMENT_NAMES[statement].as_ptr() as *const c_char,
                params.len() as c_int,
                values.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
            )
        };
        if sent == 0 {
            return Err(self.connection_error());
        }
        self.reading = statement == STATEMENT_READ;
        self.flush_rest()
    }

    fn receive(&mut self) -> Result<Option<i64>, String> {
        let pq = self.pq;
        if unsafe { (pq.consume_input)(self.conn) } == 0 {
            return Err(self.connection_error());
        }
        while unsafe { (pq.is_busy)(self.conn) } == 0 {
            let result = unsafe { (pq.get_result)(self.conn) };
            if result.is_null() {
                // The command's end: its result came before.
                let done = std::mem::replace(&mut self.pending, std::ptr::null_mut());
                if done.is_null() {
                    return Err("no result".to_string());
                }
                let status = unsafe { (pq.result_status)(done) };
                let outcome = if status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK {
                    Err(text_of(unsafe { (pq.result_error_message)(done) }))
                } else if self.reading {
                    Ok(Some(unsafe { (pq.ntuples)(done) } as i64))
                } else {
                    let text = text_of(unsafe { (pq.cmd_tuples)(done) });
                    Ok(Some(text.parse::<i64>().unwrap_or(0)))
                };
                unsafe { (pq.clear)(done) };
                return outcome;
            }
            let previous = std::mem::replace(&mut self.pending, result);
            if !previous.is_null() {
                unsafe { (pq.clear)(previous) };
            }
        }
        Ok(None)
    }

    fn broken(&self) -> bool {
        unsafe { (self.pq.status)(self.conn) != CONNECTION_OK }
    }
}

impl Drop for PgSession {
    fn drop(&mut self) {
        unsafe {
            if !self.pending.is_null() {
                (self.pq.clear)(self.pending);
            }
            if !self.conn.is_null() {
                (self.pq.finish)(self.conn);
            }
        }
    }
}
