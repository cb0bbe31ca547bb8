//! Identifiers (did:plc, TIDs, CIDs) and timestamps, written straight into a byte buffer.

use crate::rng::{Rng, SplitMix};

pub const B32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
pub const TID_ALPHA: &[u8; 32] = b"234567abcdefghijklmnopqrstuvwxyz";
/// Last character of a 256-bit hash in base32 (3 data bits + 2 zero padding bits).
const B32_LAST: &[u8; 8] = b"aeimquy4";

/// `did:plc:` + 24 base32 characters from 120 bits of `h1`/`h2`.
#[inline(always)]
pub fn push_plc(buf: &mut Vec<u8>, h1: u64, h2: u64) {
    buf.extend_from_slice(b"did:plc:");
    let mut out = [0u8; 24];
    for (i, o) in out.iter_mut().enumerate().take(12) {
        *o = B32[((h1 >> (i * 5)) & 31) as usize];
    }
    for (i, o) in out.iter_mut().enumerate().skip(12) {
        *o = B32[((h2 >> ((i - 12) * 5)) & 31) as usize];
    }
    buf.extend_from_slice(&out);
}

/// A TID: 53-bit microsecond timestamp and a 10-bit clock id, 13 sortable base32 characters.
#[inline(always)]
pub fn push_tid(buf: &mut Vec<u8>, ts_us: u64, clock: u64) {
    let v = ((ts_us & ((1u64 << 53) - 1)) << 10) | (clock & 1023);
    let mut out = [0u8; 13];
    for (i, o) in out.iter_mut().enumerate() {
        let shift = 60 - 5 * i as i32;
        let d = if shift >= 0 { (v >> shift) & 31 } else { (v << (-shift)) & 31 };
        *o = TID_ALPHA[d as usize];
    }
    buf.extend_from_slice(&out);
}

/// The 52 characters after `bafyrei`/`bafkrei` of a CIDv1 with a sha2-256 digest: the first one
/// carries 3 hash bits, the last one 3 bits plus padding, like the real thing.
#[inline(always)]
fn push_cid_tail(buf: &mut Vec<u8>, w: [u64; 5]) {
    let mut out = [0u8; 52];
    out[0] = B32[(w[0] & 7) as usize];
    let mut k = 1;
    for (wi, &word) in w.iter().enumerate() {
        let start = if wi == 0 { 3 } else { 0 };
        let mut bit = start;
        while bit + 5 <= 64 && k < 51 {
            out[k] = B32[((word >> bit) & 31) as usize];
            bit += 5;
            k += 1;
        }
    }
    out[51] = B32_LAST[((w[4] >> 61) & 7) as usize];
    buf.extend_from_slice(&out);
}

#[inline(always)]
pub fn push_cid_rng(buf: &mut Vec<u8>, rng: &mut Rng, blob: bool) {
    buf.extend_from_slice(if blob { b"bafkrei" } else { b"bafyrei" });
    let w = [rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()];
    push_cid_tail(buf, w);
}

/// A CID fully determined by `h` (the same referenced record always has the same CID).
#[inline(always)]
pub fn push_cid_hash(buf: &mut Vec<u8>, h: u64, blob: bool) {
    buf.extend_from_slice(if blob { b"bafkrei" } else { b"bafyrei" });
    let mut sm = SplitMix(h);
    let w = [sm.next(), sm.next(), sm.next(), sm.next(), sm.next()];
    push_cid_tail(buf, w);
}

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm).
#[inline(always)]
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[inline(always)]
fn two(buf: &mut Vec<u8>, v: u32) {
    buf.push(b'0' + (v / 10) as u8);
    buf.push(b'0' + (v % 10) as u8);
}

/// Timestamp formats seen in `createdAt`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TsFmt {
    Millis,
    Micros,
    Seconds,
    Offset,
}

/// Write an RFC 3339 timestamp (UTC) for `us` microseconds since the epoch.
pub fn push_iso(buf: &mut Vec<u8>, us: i64, fmt: TsFmt) {
    let secs = us.div_euclid(1_000_000);
    let frac = us.rem_euclid(1_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400) as u32;
    let (y, m, d) = civil(days);
    let y = y.clamp(0, 9999) as u32;
    buf.push(b'0' + (y / 1000) as u8);
    buf.push(b'0' + (y / 100 % 10) as u8);
    two(buf, y % 100);
    buf.push(b'-');
    two(buf, m);
    buf.push(b'-');
    two(buf, d);
    buf.push(b'T');
    two(buf, sod / 3600);
    buf.push(b':');
    two(buf, sod / 60 % 60);
    buf.push(b':');
    two(buf, sod % 60);
    match fmt {
        TsFmt::Seconds => {}
        TsFmt::Micros => {
            buf.push(b'.');
            let mut b = itoa::Buffer::new();
            let s = b.format(frac + 1_000_000);
            buf.extend_from_slice(&s.as_bytes()[1..]);
        }
        TsFmt::Millis | TsFmt::Offset => {
            buf.push(b'.');
            let ms = frac / 1000;
            buf.push(b'0' + (ms / 100) as u8);
            two(buf, ms % 100);
        }
    }
    if fmt == TsFmt::Offset {
        buf.extend_from_slice(b"+00:00");
    } else {
        buf.push(b'Z');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso() {
        let mut b = Vec::new();
        push_iso(&mut b, 1_732_206_349_000_167, TsFmt::Millis);
        assert_eq!(std::str::from_utf8(&b).unwrap(), "2024-11-21T16:25:49.000Z");
        b.clear();
        push_iso(&mut b, 1_732_206_349_000_167, TsFmt::Micros);
        assert_eq!(std::str::from_utf8(&b).unwrap(), "2024-11-21T16:25:49.000167Z");
    }

    #[test]
    fn tid() {
        // 3lbhtytnn2k2f is a real rev from 2024-11-21.
        let s = b"3lbhtytnn2k2f";
        let mut v: u64 = 0;
        for c in s {
            v = v * 32 + TID_ALPHA.iter().position(|x| x == c).unwrap() as u64;
        }
        let mut b = Vec::new();
        push_tid(&mut b, v >> 10, v & 1023);
        assert_eq!(&b, s);
    }
}
