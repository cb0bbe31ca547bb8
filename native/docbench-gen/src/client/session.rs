//! What the loop needs of a connection, and the no-op one of the driver's ceiling.

use std::ffi::{c_int, c_void};

/// The statements, in the order of their parameters' NUL-terminated values: read(key),
/// update(field, value, key), insert(document).
pub const STATEMENT_READ: usize = 0;
pub const STATEMENT_UPDATE: usize = 1;
pub const STATEMENT_INSERT: usize = 2;

/// One client's connection: one operation in flight, its answer read when its fd is readable.
pub trait Session {
    fn fd(&self) -> c_int;
    /// Send one statement (parameters NUL-terminated) without waiting for the answer.
    fn send(&mut self, statement: usize, params: &[&[u8]]) -> Result<(), String>;
    /// What has arrived: None while the answer is incomplete, else its count.
    fn receive(&mut self) -> Result<Option<i64>, String>;
    fn broken(&self) -> bool;
}

/// The driver's ceiling: an eventfd written by the request and read as the answer.
pub struct NoOpSession {
    fd: c_int,
}

impl NoOpSession {
    pub fn new() -> Result<NoOpSession, String> {
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err("eventfd failed".to_string());
        }
        Ok(NoOpSession { fd })
    }
}

impl Session for NoOpSession {
    fn fd(&self) -> c_int {
        self.fd
    }
    fn send(&mut self, _statement: usize, _params: &[&[u8]]) -> Result<(), String> {
        let one: u64 = 1;
        unsafe { libc::write(self.fd, &one as *const u64 as *const c_void, 8) };
        Ok(())
    }
    fn receive(&mut self) -> Result<Option<i64>, String> {
        let mut value: u64 = 0;
        unsafe { libc::read(self.fd, &mut value as *mut u64 as *mut c_void, 8) };
        Ok(Some(1))
    }
    fn broken(&self) -> bool {
        false
    }
}

impl Drop for NoOpSession {
    fn drop(&mut self) {
        unsafe { libc::close(self.fd) };
    }
}
