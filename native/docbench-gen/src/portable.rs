//! The portable queries' native scan: the partial answers of a query set over the lines it
//! can judge exactly, in the reference semantics of `docbench.queries.semantics` (Python);
//! every other line is handed back for the Python evaluation to judge, as `scan` does.
//!
//! A line is taken when it is valid UTF-8, serde_json reads it as one JSON object, and it
//! holds no run of 19 or more digits (an integer serde_json would read as a float where
//! Python keeps it exact). The plan (`docbench.queries.native`) is the query set without
//! what this scan does not evaluate (ISO 8601 buckets are left to Python: the plan has none).
//!
//! Output: one JSON line (the documents, per query its groups with their accumulators' state
//! or its selected rows, the count of lines handed back), then each handed-back line as a
//! little-endian u32 length and its bytes.

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
    children: HashMap<String, PathTree>,
    // a path ends here: the whole value is needed (an object's too: `exists`, a projection)
    whole: bool,
}

impl PathTree {
    fn add(&mut self, keys: &[String]) {
        match keys.split_first() {
            None => self.whole = true,
            Some((first, rest)) => self.children.entry(first.clone()).or_default().add(rest),
        }
    }

    /// The object `raw` reduced to this tree's paths; Err for a line serde_json refuses or
    /// that is not an object.
    fn prune(&self, raw: &str) -> Result<Value, serde_json::Error> {
        let map: HashMap<std::borrow::Cow<'_, str>, &serde_json::value::RawValue> = serde_json::from_str(raw)?;
        let mut kept = serde_json::Map::new();
        for (key, tree) in &self.children {
            let Some(value) = map.get(key.as_str()) else { continue };
            let text = value.get();
            if tree.whole {
                kept.insert(key.clone(), serde_json::from_str(text)?);
            } else if text.starts_with('{') {
                kept.insert(key.clone(), tree.prune(text)?);
            }
        }
        Ok(Value::Object(kept))
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

    fn state(&self) -> Value {
        // an integer total as text (Python's int is exact at any size), a float as a number
        let total = match self.total {
            Total::Int(t) => json!({"int": t.to_string()}),
            Total::Float(t) => json!({"float": t}),
        };
        json!({
            "count": self.count,
            "total": total,
            "least": self.least,
            "most": self.most,
            "distinct": self.distinct.iter().collect::<Vec<_>>(),
        })
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

/// FNV-1a: a quick hash for the group and distinct tables (their keys are not adversarial).
#[derive(Default)]
pub struct FnvHasher(u64);

impl std::hash::Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 { 0xcbf29ce484222325 } else { self.0 };
        for b in bytes {
            hash ^= *b as u64;
            hash = hash.wrapping_mul(0x100000001b3);
        }
        self.0 = hash;
    }
}

type Fnv = BuildHasherDefault<FnvHasher>;

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

struct QueryState {
    // the group's slot (its keys' value keys, joined) -> its place in `groups`
    slots: HashMap<String, usize, Fnv>,
    groups: Vec<(Vec<Value>, Vec<Accumulator>)>,
    selected: Vec<Vec<Value>>,
}

pub struct Portable {
    plan: Plan,
    paths: PathTree,
    states: Vec<QueryState>,
    pub documents: u64,
    pub handed_back: Vec<Vec<u8>>,
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
            slot: String::new(),
            scratch: String::new(),
        }
    }

    fn take(&mut self, document: &Value) {
        for (query, state) in self.plan.queries.iter().zip(self.states.iter_mut()) {
            let elements: Vec<Option<&Value>> = match &query.unnest {
                None => vec![None],
                Some(keys) => {
                    let path = PlanPath { keys: keys.clone(), element: false };
                    match resolve(document, None, &path) {
                        Some(Value::Array(items)) => items.iter().map(Some).collect(),
                        _ => Vec::new(),
                    }
                }
            };
            for element in elements {
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
                    state.selected.push(row);
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
                        state.groups.push((keys, vec![Accumulator::new(); query.aggregates.len()]));
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

    pub fn write_output(&self, out: &mut impl Write) -> io::Result<()> {
        let queries: Vec<Value> = self
            .states
            .iter()
            .map(|state| {
                let groups: Vec<Value> = state
                    .groups
                    .iter()
                    .map(|(keys, accumulators)| {
                        json!([keys, accumulators.iter().map(Accumulator::state).collect::<Vec<_>>()])
                    })
                    .collect();
                json!({"groups": groups, "selected": state.selected})
            })
            .collect();
        let header = json!({
            "documents": self.documents,
            "queries": queries,
            "handed_back": self.handed_back.len(),
        });
        out.write_all(header.to_string().as_bytes())?;
        out.write_all(b"\n")?;
        for line in &self.handed_back {
            out.write_all(&(line.len() as u32).to_le_bytes())?;
            out.write_all(line)?;
        }
        Ok(())
    }
}

/// A run of 19 or more digits: an integer beyond i64/u64 that serde_json would read as a float.
fn long_digits(line: &[u8]) -> bool {
    let mut run = 0;
    for &b in line {
        if b.is_ascii_digit() {
            run += 1;
            if run >= 19 {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

impl LineSink for Portable {
    fn line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return; // an empty line: no document, for Python either
        }
        let parsed = match std::str::from_utf8(line) {
            Ok(text) if !long_digits(line) => self.paths.prune(text.trim_start()).ok(),
            _ => None,
        };
        match parsed {
            Some(document) => {
                self.documents += 1;
                self.take(&document);
            }
            None => self.handed_back.push(line.to_vec()),
        }
    }
}
