//! `did:plc:` identifiers packed into two integers, as the oracle packs them
//! (`docbench.dataset.oracle`'s `pack_did_rows`, `encode_dids` and `decode_did`).
//!
//! A did:plc is `did:plc:` + 24 characters of base32 (`a-z2-7`): 120 bits. `hi` is the first 12
//! characters as a base-32 number (first character most significant), `lo` the last 12. The
//! scanner hands the oracle sorted arrays of these pairs, so both sides must pack alike:
//! tests/fixtures/vectors/dids.json holds dids and their packing, checked here and by
//! tests/test_native_vectors.py against the Python functions.

/// The base32 alphabet of did:plc (RFC 4648, lower case): digit `d` is `B32[d]`.
pub const B32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// The value of a base32 character, None for any other byte.
#[inline(always)]
fn digit(c: u8) -> Option<u64> {
    match c {
        b'a'..=b'z' => Some((c - b'a') as u64),
        b'2'..=b'7' => Some((c - b'2' + 26) as u64),
        _ => None,
    }
}

/// `(hi, lo)` of a did:plc (`did:plc:` + 24 base32 characters, 32 bytes), None for anything
/// else (other methods, other lengths, upper case, characters outside the alphabet).
#[inline]
pub fn pack_did(did: &[u8]) -> Option<(u64, u64)> {
    if did.len() != 32 || &did[..8] != b"did:plc:" {
        return None;
    }
    let mut parts = [0u64; 2];
    for (part, chunk) in parts.iter_mut().zip(did[8..].chunks(12)) {
        for &c in chunk {
            *part = (*part << 5) | digit(c)?;
        }
    }
    Some((parts[0], parts[1]))
}

/// The did that packs to `(hi, lo)` (each below 2^60).
pub fn unpack_did(hi: u64, lo: u64) -> String {
    let mut did = String::with_capacity(32);
    did.push_str("did:plc:");
    for part in [hi, lo] {
        for k in (0..12).rev() {
            did.push(B32[((part >> (5 * k)) & 31) as usize] as char);
        }
    }
    did
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Vectors {
        cases: Vec<Case>,
    }

    #[derive(Deserialize)]
    struct Case {
        did: String,
        packed: Option<(u64, u64)>,
    }

    fn vectors() -> Vectors {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/vectors/dids.json");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn packs_as_the_oracle_does() {
        let vectors = vectors();
        assert!(vectors.cases.iter().filter(|c| c.packed.is_some()).count() >= 10);
        assert!(vectors.cases.iter().filter(|c| c.packed.is_none()).count() >= 10);
        for case in &vectors.cases {
            assert_eq!(pack_did(case.did.as_bytes()), case.packed, "{:?}", case.did);
            if let Some((hi, lo)) = case.packed {
                assert_eq!(unpack_did(hi, lo), case.did);
            }
        }
    }

    #[test]
    fn extremes_and_order() {
        assert_eq!(pack_did(b"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa"), Some((0, 0)));
        let top = (1u64 << 60) - 1;
        assert_eq!(pack_did(b"did:plc:777777777777777777777777"), Some((top, top)));
        assert_eq!(pack_did(b"did:plc:aaaaaaaaaaabaaaaaaaaaaab"), Some((1, 1)));
        assert_eq!(pack_did(b"did:plc:baaaaaaaaaaaaaaaaaaaaaaa"), Some((1 << 55, 0)));
        // Packing keeps the dids' byte order within the alphabet's order (a-z before 2-7).
        let a = pack_did(b"did:plc:zzzzzzzzzzzzzzzzzzzzzzzz").unwrap();
        let b = pack_did(b"did:plc:222222222222222222222222").unwrap();
        assert!(a < b);
        for did in [&b"did:web:example.com"[..], b"did:plc:", b"", b"did:plc:aaaaaaaaaaaaaaaaaaaaaaa1"] {
            assert_eq!(pack_did(did), None);
        }
    }

    #[test]
    fn round_trips() {
        let mut sm = crate::rng::SplitMix(7);
        for _ in 0..1000 {
            let (hi, lo) = (sm.next() >> 4, sm.next() >> 4);
            assert_eq!(pack_did(unpack_did(hi, lo).as_bytes()), Some((hi, lo)));
        }
    }
}
