//! The portable queries' native scan: the answers' state of a query set over the lines it
//! can judge exactly, in the reference semantics of `docbench.queries.semantics` (Python);
//! every other line is handed back for the Python evaluation to judge, as `scan` does.
//!
//! A line is taken when it is valid UTF-8, serde_json reads it as one JSON object, and no
//! number the queries read is an integer beyond 64 bits (serde_json reads it as a float where
//! Python keeps it exact). A line is parsed once, along the paths the queries read (the rest
//! is validated, never built). The plan (`docbench.queries.native`) is the query set without
//! what this scan does not evaluate (ISO 8601 buckets are left to Python: the plan has none).
//!
//! `scan_files` reads the files on one thread and scans chunks of whole lines on others; the
//! threads' states are merged, and the output keeps the lines' order (groups by their first
//! line, selected rows and handed-back lines by theirs).
//!
//! Output: one JSON line (the documents, per query its groups with their accumulators' state
//! or its selected rows, the count of lines handed back), then each handed-back line as a
//! little-endian u32 length and its bytes. With no line handed back, a distinct count is
//! final and only its count is written.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::io::{self, Write};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::scan::LineSink;

#[derive(Deserialize)]
pub struct Plan {
    queries: Vec<PlanQuery>,
}

impl Plan {
    /// Every document path the queries read, as a tree: what a line is pruned to.
    fn paths(&self) -> PathTree {
        let mut tree = PathTree::default();
        for query in &self.queries {
            let mut add = |path: &PlanPath| {
                if !path.element {
                    tree.add(&path.keys);
                }
            };
            fn walk(filter: &Filter, add: &mut dyn FnMut(&PlanPath)) {
                match filter {
                    Filter::And { parts } | Filter::Or { parts } | Filter::Not { parts } => {
                        parts.iter().for_each(|p| walk(p, add))
                    }
                    Filter::Cond { path, .. } => add(path),
                }
            }
            if let Some(filter) = &query.filter {
                walk(filter, &mut add);
            }
            query.group_by.iter().for_each(|k| add(&k.path));
            query.aggregates.iter().filter_map(|a| a.path.as_ref()).for_each(&mut add);
            query.select.iter().for_each(&mut add);
            if let Some(keys) = &query.unnest {
                tree.add(keys);
            }
        }
        tree
    }
}

/// The paths a plan reads: a line's JSON is parsed only along them (the rest is validated,
/// never built), so a wide document costs what its paths cost.
#[derive(Default)]
struct PathTree {
    // a handful of keys: a list is quicker than a hash table
    children: Vec<(String, PathTree)>,
    // a path ends here: the whole value is needed (an object's too: `exists`, a projection)
    whole: bool,
}

impl PathTree {
    fn add(&mut self, keys: &[String]) {
        match keys.split_first() {
            None => self.whole = true,
            Some((first, rest)) => {
                let at = match self.children.iter().position(|(key, _)| key == first) {
                    Some(at) => at,
                    None => {
                        self.children.push((first.clone(), PathTree::default()));
                        self.children.len() - 1
                    }
                };
                self.children[at].1.add(rest)
            }
        }
    }

    fn child(&self, key: &str) -> Option<&PathTree> {
        self.children.iter().find(|(k, _)| k == key).map(|(_, tree)| tree)
    }

    /// The object `raw` reduced to this tree's paths, in one pass (what no path reads is
    /// validated, never built); Err for a line serde_json refuses or that is not an object.
    fn prune(&self, raw: &str) -> Result<Value, serde_json::Error> {
        use serde::de::{DeserializeSeed, Error};
        let mut reader = serde_json::Deserializer::from_str(raw);
        let pruned = self.deserialize(&mut reader)?;
        reader.end()?;
        pruned.ok_or_else(|| serde_json::Error::custom("not an object"))
    }
}

/// A map key, borrowed from the line unless it has escapes.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> serde::de::Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// A value read along the tree: an object is pruned to the tree's keys (Some), anything else
/// is skipped (None).
impl<'de> serde::de::DeserializeSeed<'de> for &PathTree {
    type Value = Option<Value>;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Option<Value>, D::Error> {
        deserializer.deserialize_any(PruneVisitor(self))
    }
}

struct PruneVisitor<'t>(&'t PathTree);

impl<'de> serde::de::Visitor<'de> for PruneVisitor<'_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Option<Value>, A::Error> {
        let mut kept = serde_json::Map::new();
        while let Some(Key(key)) = map.next_key::<Key>()? {
            match self.0.child(key.as_ref()) {
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Some(tree) if tree.whole => {
                    kept.insert(key.into_owned(), map.next_value::<Value>()?);
                }
                Some(tree) => match map.next_value_seed(tree)? {
                    Some(object) => {
                        kept.insert(key.into_owned(), object);
                    }
                    // a later duplicate key wins, as in Python's json
                    None => {
                        kept.remove(key.as_ref());
                    }
                },
            }
        }
        Ok(Some(Value::Object(kept)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Value>, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<Value>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<Value>, E> {
        Ok(None)
    }
}

#[derive(Deserialize)]
struct PlanQuery {
    #[serde(rename = "where")]
    filter: Option<Filter>,
    unnest: Option<Vec<String>>,
    group_by: Vec<PlanKey>,
    aggregates: Vec<PlanAggregate>,
    select: Vec<PlanPath>,
}

#[derive(Deserialize, Clone)]
struct PlanPath {
    keys: Vec<String>,
    element: bool,
}

#[derive(Deserialize)]
struct PlanKey {
    path: PlanPath,
    // An epoch bucket: seconds = floor(value / divisor); start = seconds / width * width, or
    // (seconds / width) % cycle.
    divisor: Option<i64>,
    width: Option<i64>,
    cycle: Option<i64>,
}

#[derive(Deserialize)]
struct PlanAggregate {
    #[serde(rename = "fn")]
    function: String,
    path: Option<PlanPath>,
}

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Filter {
    And { parts: Vec<Filter> },
    Or { parts: Vec<Filter> },
    Not { parts: Vec<Filter> },
    Cond { path: PlanPath, test: String, value: Value },
}

/// A running total as Python's `sum` keeps it: an integer until a float joins.
#[derive(Clone, Copy)]
enum Total {
    Int(i128),
    Float(f64),
}

#[derive(Clone)]
struct Accumulator {
    count: u64,
    total: Total,
    least: Option<Value>,
    most: Option<Value>,
    distinct: HashSet<String, Fnv>,
}

impl Accumulator {
    fn new() -> Self {
        Accumulator { count: 0, total: Total::Int(0), least: None, most: None, distinct: HashSet::default() }
    }

    fn add(&mut self, function: &str, value: Option<&Value>, scratch: &mut String) {
        match function {
            "count" => self.count += 1,
            "count_distinct" => {
                if let Some(v) = value {
                    scratch.clear();
                    if push_value_key(v, scratch) && !self.distinct.contains(scratch.as_str()) {
                        self.distinct.insert(scratch.clone());
                    }
                }
            }
            _ => {
                let Some(v) = value.filter(|v| v.is_number()) else { return };
                self.count += 1;
                self.total = match (self.total, v.as_i64()) {
                    (Total::Int(t), Some(i)) => Total::Int(t + i as i128),
                    (Total::Int(t), None) => match v.as_u64() {
                        Some(u) => Total::Int(t + u as i128),
                        None => Total::Float(t as f64 + v.as_f64().unwrap_or(0.0)),
                    },
                    (Total::Float(t), _) => Total::Float(t + v.as_f64().unwrap_or(0.0)),
                };
                if self.least.as_ref().is_none_or(|l| less(v, l)) {
                    self.least = Some(v.clone());
                }
                if self.most.as_ref().is_none_or(|m| less(m, v)) {
                    self.most = Some(v.clone());
                }
            }
        }
    }

    fn merge(&mut self, other: Accumulator) {
        self.count += other.count;
        self.total = match (self.total, other.total) {
            (Total::Int(a), Total::Int(b)) => Total::Int(a + b),
            (Total::Int(a), Total::Float(b)) => Total::Float(a as f64 + b),
            (Total::Float(a), Total::Int(b)) => Total::Float(a + b as f64),
            (Total::Float(a), Total::Float(b)) => Total::Float(a + b),
        };
        if let Some(theirs) = other.least {
            if self.least.as_ref().is_none_or(|l| less(&theirs, l)) {
                self.least = Some(theirs);
            }
        }
        if let Some(theirs) = other.most {
            if self.most.as_ref().is_none_or(|m| less(m, &theirs)) {
                self.most = Some(theirs);
            }
        }
        let mut theirs = other.distinct;
        if self.distinct.len() < theirs.len() {
            std::mem::swap(&mut self.distinct, &mut theirs); // the smaller set goes in
        }
        self.distinct.extend(theirs);
    }

    /// The state Python's accumulator is rebuilt from, written as a JSON object with only the
    /// fields that differ from an empty accumulator's (Python reads the missing ones as such):
    /// a count, an integer total as text (Python's int is exact at any size) or a float, the
    /// least and most numbers, and the distinct values (sorted: the output does not depend on
    /// how the threads met them) or, when final, only their count.
    fn write_state(&self, function: &str, out: &mut impl Write, final_count: bool) -> io::Result<()> {
        // what the function's result reads (Python: a numeric aggregate of no number is null)
        let (total, least, most) = match function {
            "sum" | "avg" => (true, false, false),
            "min" => (false, true, false),
            "max" => (false, false, true),
            "count" | "count_distinct" => (false, false, false),
            _ => (true, true, true),
        };
        let mut fields: Vec<String> = Vec::new();
        if self.count != 0 && function != "count_distinct" {
            fields.push(format!("\"count\":{}", self.count));
        }
        match self.total {
            Total::Int(0) => {}
            _ if !total => {}
            Total::Int(t) => fields.push(format!("\"total\":{{\"int\":\"{t}\"}}")),
            Total::Float(t) => fields.push(format!("\"total\":{{\"float\":{}}}", json!(t))),
        }
        if let Some(value) = self.least.as_ref().filter(|_| least) {
            fields.push(format!("\"least\":{value}"));
        }
        if let Some(value) = self.most.as_ref().filter(|_| most) {
            fields.push(format!("\"most\":{value}"));
        }
        if final_count {
            if !self.distinct.is_empty() {
                fields.push(format!("\"distinct_count\":{}", self.distinct.len()));
            }
        } else if !self.distinct.is_empty() {
            let mut values: Vec<&String> = self.distinct.iter().collect();
            values.sort_unstable();
            fields.push(format!("\"distinct\":{}", json!(values)));
        }
        write!(out, "{{{}}}", fields.join(","))
    }
}

/// a < b for two JSON numbers, exactly where both are integers.
fn less(a: &Value, b: &Value) -> bool {
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) => x < y,
        _ => match (a.as_u64(), b.as_u64()) {
            (Some(x), Some(y)) => x < y,
            _ => a.as_f64().unwrap_or(0.0) < b.as_f64().unwrap_or(0.0),
        },
    }
}

/// Appends Python's `value_key` of a scalar as text to `out`; false (nothing appended) for
/// what is not a string, number or boolean. Numbers by value (1 and 1.0 one key), booleans
/// apart from numbers.
fn push_value_key(value: &Value, out: &mut String) -> bool {
    use std::fmt::Write as _;
    match value {
        Value::Bool(b) => out.push_str(if *b { "b:true" } else { "b:false" }),
        Value::String(s) => {
            out.push_str("s:");
            out.push_str(s);
        }
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "n:{i}");
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "n:{u}");
            } else {
                let f = n.as_f64().unwrap_or(0.0);
                if f.fract() == 0.0 && f.abs() < 9.2e18 {
                    let _ = write!(out, "n:{}", f as i64);
                } else {
                    let _ = write!(out, "f:{f:?}");
                }
            }
        }
        _ => return false,
    }
    true
}

/// A quick hash for the group and distinct tables (their keys are not adversarial): eight
/// bytes at a time, each word folded in as FxHash does (rotate, xor, multiply); the keys are
/// tens of bytes (a did is 32), where a byte-wise hash was a third of a distinct count's time.
#[derive(Default)]
pub struct FnvHasher(u64);

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FnvHasher {
    #[inline]
    fn fold(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl std::hash::Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.fold(u64::from_le_bytes(word.try_into().unwrap_or([0; 8])));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.fold(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        }
    }
    fn write_u8(&mut self, byte: u8) {
        self.fold(byte as u64);
    }
    fn write_usize(&mut self, value: usize) {
        self.fold(value as u64);
    }
}

type Fnv = BuildHasherDefault<FnvHasher>;

fn resolve_keys<'a>(document: &'a Value, keys: &[String]) -> Option<&'a Value> {
    let mut value = document;
    for key in keys {
        value = value.as_object()?.get(key)?;
    }
    Some(value)
}

fn resolve<'a>(document: &'a Value, element: Option<&'a Value>, path: &PlanPath) -> Option<&'a Value> {
    let mut value = if path.element { element? } else { document };
    for key in &path.keys {
        value = value.as_object()?.get(key)?;
    }
    Some(value)
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => !less(a, b) && !less(b, a),
        _ => a == b,
    }
}

fn compare(value: &Value, test: &str, literal: &Value) -> bool {
    if json_type(value) != json_type(literal) {
        return false;
    }
    match test {
        "eq" => same(value, literal),
        "ne" => !same(value, literal),
        _ => {
            let ordering = match (value, literal) {
                (Value::Number(_), Value::Number(_)) => {
                    if less(value, literal) {
                        std::cmp::Ordering::Less
                    } else if less(literal, value) {
                        std::cmp::Ordering::Greater
                    } else {
                        std::cmp::Ordering::Equal
                    }
                }
                (Value::String(x), Value::String(y)) => x.as_str().cmp(y.as_str()),
                _ => return false,
            };
            match test {
                "lt" => ordering.is_lt(),
                "le" => ordering.is_le(),
                "gt" => ordering.is_gt(),
                _ => ordering.is_ge(),
            }
        }
    }
}

fn matches(filter: &Filter, document: &Value, element: Option<&Value>) -> bool {
    match filter {
        Filter::And { parts } => parts.iter().all(|p| matches(p, document, element)),
        Filter::Or { parts } => parts.iter().any(|p| matches(p, document, element)),
        Filter::Not { parts } => !matches(&parts[0], document, element),
        Filter::Cond { path, test, value: literal } => {
            let found = resolve(document, element, path);
            if test == "exists" {
                return found.is_some() == literal.as_bool().unwrap_or(true);
            }
            let Some(value) = found else { return false };
            match test.as_str() {
                "in" => literal.as_array().is_some_and(|items| items.iter().any(|i| compare(value, "eq", i))),
                "prefix" => match (value, literal) {
                    (Value::String(s), Value::String(p)) => s.starts_with(p.as_str()),
                    _ => false,
                },
                "contains" => match (value, literal) {
                    (Value::String(s), Value::String(p)) => s.contains(p.as_str()),
                    _ => false,
                },
                "array_contains" => {
                    value.as_array().is_some_and(|items| items.iter().any(|i| compare(i, "eq", literal)))
                }
                _ => compare(value, test, literal),
            }
        }
    }
}

/// A row's group key: the document's own value (borrowed), a computed bucket, or none.
enum GroupValue<'a> {
    Found(&'a Value),
    Bucket(i64),
    Null,
}

impl GroupValue<'_> {
    fn push_key(&self, out: &mut String) {
        use std::fmt::Write as _;
        match self {
            GroupValue::Found(v) => {
                push_value_key(v, out);
            }
            GroupValue::Bucket(b) => {
                let _ = write!(out, "n:{b}");
            }
            GroupValue::Null => out.push('z'),
        }
    }

    fn to_value(&self) -> Value {
        match self {
            GroupValue::Found(v) => (*v).clone(),
            GroupValue::Bucket(b) => json!(b),
            GroupValue::Null => Value::Null,
        }
    }
}

fn group_value<'a>(value: Option<&'a Value>, key: &PlanKey) -> GroupValue<'a> {
    let Some(value) = value else { return GroupValue::Null };
    match (key.divisor, key.width) {
        (Some(divisor), Some(width)) => {
            let Some(number) = value.as_f64().filter(|_| value.is_number()) else { return GroupValue::Null };
            if !number.is_finite() {
                return GroupValue::Null;
            }
            // floor(value / divisor) as Python computes it: exactly for integers
            let seconds = match value.as_i64() {
                Some(i) => i.div_euclid(divisor),
                None => (number / divisor as f64).floor() as i64,
            };
            let bucket = seconds.div_euclid(width);
            GroupValue::Bucket(match key.cycle {
                Some(cycle) => bucket.rem_euclid(cycle),
                None => bucket * width,
            })
        }
        _ if matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_)) => GroupValue::Found(value),
        _ => GroupValue::Null,
    }
}

/// A group's keys, its accumulators, and the position of the line that opened it.
type Group = (Vec<Value>, Vec<Accumulator>, u64);

struct QueryState {
    // the group's slot (its keys' value keys, joined) -> its place in `groups`
    slots: HashMap<String, usize, Fnv>,
    groups: Vec<Group>,
    // each row with the position of its line (threads read chunks out of order)
    selected: Vec<(u64, Vec<Value>)>,
}

pub struct Portable {
    plan: Plan,
    paths: PathTree,
    states: Vec<QueryState>,
    pub documents: u64,
    pub handed_back: Vec<(u64, Vec<u8>)>,
    // the current line's position: its chunk's number in the high 32 bits, its line in the low
    position: u64,
    slot: String,
    scratch: String,
}

impl Portable {
    pub fn new(plan: Plan) -> Self {
        let states = plan
            .queries
            .iter()
            .map(|_| QueryState { slots: HashMap::default(), groups: Vec::new(), selected: Vec::new() })
            .collect();
        let paths = plan.paths();
        Portable {
            plan,
            paths,
            states,
            documents: 0,
            handed_back: Vec::new(),
            position: 0,
            slot: String::new(),
            scratch: String::new(),
        }
    }

    fn take(&mut self, document: &Value) {
        for (query, state) in self.plan.queries.iter().zip(self.states.iter_mut()) {
            // each element of the unnested array, or the document once (no Vec per line)
            let items: &[Value] = match &query.unnest {
                None => &[],
                Some(keys) => match resolve_keys(document, keys) {
                    Some(Value::Array(items)) => items,
                    _ => continue,
                },
            };
            let unnest = query.unnest.is_some();
            let mut items = items.iter();
            let mut whole = Some(None);
            loop {
                let element: Option<&Value> = if unnest {
                    match items.next() {
                        Some(item) => Some(item),
                        None => break,
                    }
                } else {
                    match whole.take() {
                        Some(none) => none,
                        None => break,
                    }
                };
                if let Some(filter) = &query.filter {
                    if !matches(filter, document, element) {
                        continue;
                    }
                }
                if !query.select.is_empty() {
                    let row = query
                        .select
                        .iter()
                        .map(|p| resolve(document, element, p).cloned().unwrap_or(Value::Null))
                        .collect();
                    state.selected.push((self.position, row));
                    continue;
                }
                self.slot.clear();
                for key in &query.group_by {
                    group_value(resolve(document, element, &key.path), key).push_key(&mut self.slot);
                    self.slot.push('\u{1}');
                }
                let index = match state.slots.get(self.slot.as_str()) {
                    Some(&index) => index,
                    None => {
                        let keys = query
                            .group_by
                            .iter()
                            .map(|k| group_value(resolve(document, element, &k.path), k).to_value())
                            .collect();
                        state.slots.insert(self.slot.clone(), state.groups.len());
                        state.groups.push((keys, vec![Accumulator::new(); query.aggregates.len()], self.position));
                        state.groups.len() - 1
                    }
                };
                let accumulators = &mut state.groups[index].1;
                for (aggregate, accumulator) in query.aggregates.iter().zip(accumulators.iter_mut()) {
                    let value = aggregate.path.as_ref().and_then(|p| resolve(document, element, p));
                    accumulator.add(&aggregate.function, value, &mut self.scratch);
                }
            }
        }
    }

    /// Fold in the state of another scan of the same plan over other lines.
    pub fn merge(&mut self, other: Portable) {
        self.documents += other.documents;
        self.handed_back.extend(other.handed_back);
        for (mine, theirs) in self.states.iter_mut().zip(other.states) {
            mine.selected.extend(theirs.selected);
            let mut groups: Vec<Option<Group>> = theirs.groups.into_iter().map(Some).collect();
            for (slot, index) in theirs.slots {
                let Some((keys, accumulators, first)) = groups[index].take() else { continue };
                match mine.slots.get(&slot) {
                    Some(&at) => {
                        let group = &mut mine.groups[at];
                        group.2 = group.2.min(first);
                        for (a, b) in group.1.iter_mut().zip(accumulators) {
                            a.merge(b);
                        }
                    }
                    None => {
                        mine.slots.insert(slot, mine.groups.len());
                        mine.groups.push((keys, accumulators, first));
                    }
                }
            }
        }
    }

    /// The header line, then the handed-back lines, everything in the lines' order. With no
    /// line handed back, a distinct count is final: its count is written, not its values.
    pub fn write_output(&mut self, out: &mut impl Write) -> io::Result<()> {
        // written as it goes: a set grouped by a high-cardinality path has a group per value,
        // and a tree of JSON values for all of them cost more than the scan (memory and time)
        let final_counts = self.handed_back.is_empty();
        write!(out, "{{\"documents\":{},\"handed_back\":{},\"queries\":[", self.documents, self.handed_back.len())?;
        for (number, (state, query)) in self.states.iter_mut().zip(&self.plan.queries).enumerate() {
            state.groups.sort_by_key(|group| group.2);
            state.selected.sort_by_key(|row| row.0);
            out.write_all(if number == 0 { b"{\"groups\":[" } else { b",{\"groups\":[" })?;
            for (index, (keys, accumulators, _)) in state.groups.iter().enumerate() {
                out.write_all(if index == 0 { b"[" } else { b",[" })?;
                serde_json::to_writer(&mut *out, keys)?;
                out.write_all(b",[")?;
                for (at, (accumulator, aggregate)) in accumulators.iter().zip(&query.aggregates).enumerate() {
                    if at > 0 {
                        out.write_all(b",")?;
                    }
                    accumulator.write_state(&aggregate.function, out, final_counts)?;
                }
                out.write_all(b"]]")?;
            }
            out.write_all(b"],\"selected\":[")?;
            for (index, row) in state.selected.iter().enumerate() {
                if index > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, &row.1)?;
            }
            out.write_all(b"]}")?;
        }
        out.write_all(b"]}\n")?;
        self.handed_back.sort_by_key(|line| line.0);
        for (_, line) in &self.handed_back {
            out.write_all(&(line.len() as u32).to_le_bytes())?;
            out.write_all(line)?;
        }
        Ok(())
    }

    /// Every line of a chunk (whole lines; the last may lack its newline) but those of
    /// `skipped` (the file's line numbers, 1-based, that the caller leaves out).
    fn chunk(&mut self, piece: &Chunk, skipped: Option<&HashSet<u64>>) {
        self.position = piece.number << 32;
        let bytes = &piece.bytes;
        let mut start = 0;
        // memchr finds the newlines (a byte-wise split was a tenth of the scan)
        let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
        for (index, end) in ends.enumerate() {
            if !skipped.is_some_and(|lines| lines.contains(&(piece.first_line + index as u64))) {
                self.line(&bytes[start..end]);
            }
            self.position += 1;
            start = end + 1;
        }
    }
}

/// Whole lines of one file, as the reader sends them to the scan threads.
struct Chunk {
    number: u64,
    file: usize,
    // the file's line number (1-based) of the chunk's first line
    first_line: u64,
    bytes: Vec<u8>,
}

/// The (file index -> line numbers) a scan leaves out: documents an engine refused, whose
/// answers are computed again without them.
pub type Skip = HashMap<usize, HashSet<u64>>;

/// Reads `--skip`'s file: `{"FILE INDEX": [line numbers, 1-based], ...}`.
pub fn read_skip(text: &str) -> Result<Skip, serde_json::Error> {
    let raw: HashMap<String, Vec<u64>> = serde_json::from_str(text)?;
    Ok(raw
        .into_iter()
        .filter_map(|(file, lines)| file.parse::<usize>().ok().map(|f| (f, lines.into_iter().collect())))
        .collect())
}

/// The plan's answers over every file (each `(compression, path)`, in order) on `threads`
/// threads: this one reads and decompresses, cutting the stream into chunks of whole lines;
/// each worker scans the chunks it takes; the workers' states are merged at the end.
pub fn scan_files(
    plan: &str,
    files: &[(String, String)],
    threads: usize,
    chunk_bytes: usize,
    skip: &Skip,
    open: impl Fn(&str, &str) -> io::Result<Box<dyn io::Read>>,
) -> io::Result<Portable> {
    use std::sync::{mpsc, Arc, Mutex};
    let new_state = || serde_json::from_str::<Plan>(plan).map(Portable::new).map_err(io::Error::other);
    let mut merged = new_state()?;
    let (sender, receiver) = mpsc::sync_channel::<Chunk>(threads * 2);
    let receiver = Arc::new(Mutex::new(receiver));
    // the scan threads hand their chunks' buffers back: a new buffer of megabytes each time
    // was fresh pages from the kernel, zeroed (a tenth of the scan)
    let (recycle, recycled) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                let receiver = Arc::clone(&receiver);
                let recycle = recycle.clone();
                let mut state = new_state();
                scope.spawn(move || {
                    if let Ok(state) = state.as_mut() {
                        loop {
                            let next = receiver.lock().map_err(|_| ()).and_then(|r| r.recv().map_err(|_| ()));
                            let Ok(piece) = next else { break };
                            state.chunk(&piece, skip.get(&piece.file));
                            let _ = recycle.send(piece.bytes); // the reader may have finished
                        }
                    }
                    state
                })
            })
            .collect();
        let read = (|| -> io::Result<()> {
            let mut number = 0u64;
            for (file, (compression, path)) in files.iter().enumerate() {
                let mut reader = open(compression, path)?;
                let mut carry: Vec<u8> = Vec::new();
                let mut first_line = 1u64;
                let mut send = |bytes: Vec<u8>| -> io::Result<()> {
                    let lines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
                    let piece = Chunk { number, file, first_line, bytes };
                    sender.send(piece).map_err(|_| io::Error::other("the scan threads stopped"))?;
                    number += 1;
                    first_line += lines;
                    Ok(())
                };
                loop {
                    let mut chunk = recycled.try_recv().unwrap_or_default();
                    chunk.clear();
                    chunk.append(&mut carry);
                    let have = chunk.len();
                    chunk.resize(have.max(chunk_bytes / 2) + chunk_bytes, 0);
                    let n = read_full(&mut *reader, &mut chunk[have..])?;
                    chunk.truncate(have + n);
                    if n == 0 {
                        if !chunk.is_empty() {
                            send(chunk)?;
                        }
                        break;
                    }
                    // whole lines go; the unfinished last one waits for the next read
                    if let Some(end) = memchr::memrchr(b'\n', &chunk) {
                        carry = chunk.split_off(end + 1);
                        send(chunk)?;
                    } else {
                        carry = chunk; // one line longer than the chunk
                    }
                }
            }
            Ok(())
        })();
        drop(sender);
        for worker in workers {
            let state = worker.join().map_err(|_| io::Error::other("a scan thread panicked"))??;
            merged.merge(state);
        }
        read
    })?;
    Ok(merged)
}

/// Reads until `buf` is full or the stream ends.
fn read_full(reader: &mut dyn io::Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Whether every number in `value` is what Python reads: serde_json reads an integer beyond
/// i64/u64 as a float (Python keeps it exact), so a float that large is handed back.
fn exact(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.abs() < 9.2e18),
        Value::Array(items) => items.iter().all(exact),
        Value::Object(map) => map.values().all(exact),
        _ => true,
    }
}

impl LineSink for Portable {
    fn line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return; // an empty line: no document, for Python either
        }
        let parsed = match std::str::from_utf8(line) {
            Ok(text) => self.paths.prune(text.trim_start()).ok().filter(exact),
            Err(_) => None,
        };
        match parsed {
            Some(document) => {
                self.documents += 1;
                self.take(&document);
            }
            None => self.handed_back.push((self.position, line.to_vec())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = r#"{"queries": [
        {"where": {"op": "cond", "path": {"keys": ["k"], "element": false}, "test": "ne", "value": "x"},
         "unnest": null, "group_by": [{"path": {"keys": ["k"], "element": false}}],
         "aggregates": [{"fn": "count", "path": null},
                        {"fn": "count_distinct", "path": {"keys": ["u"], "element": false}},
                        {"fn": "sum", "path": {"keys": ["n"], "element": false}}],
         "select": []},
        {"where": {"op": "cond", "path": {"keys": ["n"], "element": false}, "test": "gt", "value": 90},
         "unnest": null, "group_by": [], "aggregates": [], "select": [{"keys": ["u"], "element": false}]}
    ]}"#;

    fn lines(bad: bool) -> Vec<u8> {
        let mut data = Vec::new();
        for i in 0..500u64 {
            let line = format!("{{\"k\": \"g{}\", \"u\": \"u{}\", \"n\": {}}}\n", i % 7, i % 31, i % 101);
            data.extend_from_slice(line.as_bytes());
            if bad && i % 97 == 0 {
                data.extend_from_slice(b"{\"k\": \"g1\", \"n\": 123456789012345678901234}\n\xff\xfe\n{\"k\":\n");
            }
        }
        data
    }

    fn output(data: &[u8], threads: usize, chunk_bytes: usize) -> Vec<u8> {
        output_skipping(data, threads, chunk_bytes, &Skip::new())
    }

    fn output_skipping(data: &[u8], threads: usize, chunk_bytes: usize, skip: &Skip) -> Vec<u8> {
        let owned = data.to_vec();
        let files = vec![("none".to_string(), "a".to_string()), ("none".to_string(), "b".to_string())];
        let mut state = scan_files(PLAN, &files, threads, chunk_bytes, skip, |_, _| {
            Ok(Box::new(io::Cursor::new(owned.clone())) as Box<dyn io::Read>)
        })
        .unwrap();
        let mut out = Vec::new();
        state.write_output(&mut out).unwrap();
        out
    }

    #[test]
    fn threads_and_chunks_give_one_scan_answers() {
        for bad in [false, true] {
            let data = lines(bad);
            let single = output(&data, 1, 1 << 20);
            for (threads, chunk) in [(2, 64), (3, 1000), (4, 7)] {
                let same = output(&data, threads, chunk) == single;
                assert!(same, "threads {threads}, chunk {chunk}, bad {bad}: another answer");
            }
            let header: Value =
                serde_json::from_slice(&single[..single.iter().position(|&b| b == b'\n').unwrap()]).unwrap();
            assert_eq!(header["documents"], json!(1000));
            let distinct = &header["queries"][0]["groups"][0][1][1];
            if bad {
                assert_eq!(header["handed_back"], json!(3 * 6 * 2)); // a big integer, bad bytes, a cut line: 6 times a file
                assert!(distinct["distinct_count"].is_null() && distinct["distinct"].as_array().unwrap().len() > 1);
            } else {
                assert_eq!(header["handed_back"], json!(0));
                assert!(distinct["distinct_count"].as_u64().unwrap() > 1);
            }
        }
    }

    #[test]
    fn skipped_lines_are_left_out_wherever_the_chunks_cut() {
        let data = lines(false);
        // lines 1 and 500 of the first file, 250 of the second
        let skip: Skip =
            [(0, [1u64, 500].into_iter().collect()), (1, [250u64].into_iter().collect())].into_iter().collect();
        let expected = output_skipping(&data, 1, 1 << 20, &skip);
        for (threads, chunk) in [(2, 64), (3, 1000), (2, 7)] {
            assert!(output_skipping(&data, threads, chunk, &skip) == expected, "threads {threads}, chunk {chunk}");
        }
        let header: Value =
            serde_json::from_slice(&expected[..expected.iter().position(|&b| b == b'\n').unwrap()]).unwrap();
        assert_eq!(header["documents"], json!(997));
    }
}
