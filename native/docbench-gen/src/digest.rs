//! SHA-256 of the bytes that pass through a writer (the generator's output file) or a reader
//! (the scanner's input file), and its hex form.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::rc::Rc;

use sha2::{Digest, Sha256};

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|x| format!("{x:02x}")).collect()
}

/// Counts and hashes the bytes that reach `inner`.
pub struct HashWriter<W: Write> {
    pub inner: W,
    pub hasher: Sha256,
    pub bytes: u64,
}

impl<W: Write> HashWriter<W> {
    pub fn new(inner: W) -> Self {
        HashWriter { inner, hasher: Sha256::new(), bytes: 0 }
    }
}

impl<W: Write> Write for HashWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A reader that hashes what passes through it; clones share the state (a decoder owns one
/// clone, the caller asks the other for the digest at the end).
#[derive(Clone)]
pub struct Sha256Reader {
    inner: Rc<RefCell<(Box<dyn Read>, Sha256)>>,
}

impl Sha256Reader {
    pub fn new(inner: Box<dyn Read>) -> Self {
        Sha256Reader { inner: Rc::new(RefCell::new((inner, Sha256::new()))) }
    }

    /// The hex digest of everything read, and of what is left to read (a decoder may stop
    /// before a file's very last bytes).
    pub fn hex(&self) -> io::Result<String> {
        let mut state = self.inner.borrow_mut();
        let mut rest = Vec::new();
        state.0.read_to_end(&mut rest)?;
        state.1.update(&rest);
        Ok(hex(&state.1.clone().finalize()))
    }
}

impl Read for Sha256Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = self.inner.borrow_mut();
        let n = state.0.read(buf)?;
        state.1.update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    #[test]
    fn writer_and_reader_hash_what_passes() {
        let mut w = HashWriter::new(Vec::new());
        w.write_all(b"ab").unwrap();
        w.write_all(b"c").unwrap();
        assert_eq!((w.bytes, hex(&w.hasher.clone().finalize())), (3, ABC.to_string()));
        assert_eq!(w.inner, b"abc");

        let shared = Sha256Reader::new(Box::new(&b"abc"[..]));
        let mut first = [0u8; 1];
        shared.clone().read_exact(&mut first).unwrap();
        // (the rest, never read by the decoder, is hashed too)
        assert_eq!(shared.hex().unwrap(), ABC);
    }
}
