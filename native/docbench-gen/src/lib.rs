//! docbench's native code: one library, three programs (src/bin/).
//!
//! - `docbench-gen`, the dataset generator: [`gen`] writes one Jetstream event per call
//!   ([`model`]: the calibrated stream; [`text`], [`words`]: post texts; [`ids`]: dids, TIDs,
//!   CIDs, timestamps; [`json`]: string escaping), [`datafile`] what else makes data file k
//!   (times, hard documents, invalid lines, the version fingerprint).
//!   `docbench-gen shapes` writes documents of other shapes ([`shapes`]: paths, depth, types,
//!   popularity as knobs) with the answers of the shape queries.
//! - `docbench-scan`, the oracle's native scanner: [`scan`].
//! - `docbench-client`, the throughput driver's compiled client loop: [`client`].
//!
//! Shared by them: [`rng`] (every random number), [`did`] (did:plc packing, the oracle's),
//! [`ycsb`] (YCSB keys and key choosers, contracts/ycsb.py's), [`digest`] (SHA-256 of what
//! passes), [`procstats`]. What must match the Python side ([`did`], [`ycsb`]) is checked on
//! both sides against the same vectors, tests/fixtures/vectors/*.json.

#![allow(clippy::manual_is_multiple_of)]

pub mod client;
pub mod datafile;
pub mod did;
pub mod digest;
pub mod gen;
pub mod ids;
pub mod json;
pub mod model;
pub mod portable;
pub mod procstats;
pub mod rng;
pub mod scan;
pub mod shapes;
pub mod text;
pub mod words;
pub mod ycsb;
