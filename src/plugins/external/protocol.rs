//! Kubebuilder's external plugin protocol (`v1alpha1`), as v4.16 speaks it: a `PluginRequest`
//! (`apiVersion`, `args`, `command`, `universe`, and `pluginChain` and `config` when known) on
//! the plugin's stdin, a `PluginResponse` (`universe`, `error`, `errorMsgs`, and for the `flags`
//! and `metadata` requests `flags` and `metadata`) on its stdout.
//!
//! Responses are read the way Go's `encoding/json` reads them into Kubebuilder's types: unknown
//! fields are ignored, `null` is an empty value, and field names match without regard to case
//! (Kubebuilder's `Flag` has no JSON tags, so Go plugins send `Name`, others `name`).

use anyhow::{anyhow, bail, Result};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub const API_VERSION: &str = "v1alpha1";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Request<'a> {
    pub api_version: &'a str,
    pub args: &'a [String],
    pub command: &'a str,
    pub universe: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub plugin_chain: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<&'a Value>,
}

impl Request<'_> {
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a request serialises")
    }
}

/// A flag a plugin declares for one subcommand.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    pub name: String,
    /// `string`, `bool`, `int` or `float` (any other type reads as `string`, as in Kubebuilder).
    pub kind: FlagType,
    pub default: String,
    pub usage: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagType {
    String,
    Bool,
    Int,
    Float,
}

/// A plugin's help for one subcommand.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metadata {
    pub description: String,
    pub examples: String,
}

/// A successful response.
#[derive(Debug, Default)]
pub struct Response {
    pub universe: BTreeMap<String, String>,
    pub flags: Vec<Flag>,
    pub metadata: Metadata,
}

/// The field `name` of an object, matched as Go matches struct fields: exactly, else without
/// regard to case. `null` reads as absent.
fn field<'v>(obj: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    obj.get(name)
        .or_else(|| {
            obj.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        })
        .filter(|v| !v.is_null())
}

fn string(obj: &Map<String, Value>, name: &str, at: &str) -> Result<String> {
    match field(obj, name) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => bail!("`{at}{name}` must be a string, not {}", kind_of(v)),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Read a response. `Err` carries what is wrong with it, to be put in context by the caller;
/// a response with `error: true` is an error made of its `errorMsgs`.
pub fn parse(out: &[u8]) -> Result<Response, Problem> {
    let value: Value = serde_json::from_slice(out).map_err(|e| {
        let shown = String::from_utf8_lossy(&out[..out.len().min(200)])
            .trim()
            .to_string();
        Problem::Invalid(if out.iter().all(u8::is_ascii_whitespace) {
            "it printed nothing on stdout".to_string()
        } else {
            format!("its stdout is not one JSON PluginResponse ({e}); it began with: {shown:?}")
        })
    })?;
    let Value::Object(obj) = value else {
        return Err(Problem::Invalid(format!(
            "its stdout is {}, not a JSON object (a PluginResponse)",
            kind_of(&value)
        )));
    };
    read(&obj)
        .map_err(|e| Problem::Invalid(format!("its response is not a valid PluginResponse: {e}")))?
}

/// What is wrong with a response.
#[derive(Debug)]
pub enum Problem {
    /// Not a PluginResponse.
    Invalid(String),
    /// `error: true`, with its messages.
    Failed(Vec<String>),
}

fn read(obj: &Map<String, Value>) -> Result<Result<Response, Problem>> {
    let failed = match field(obj, "error") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => bail!("`error` must be true or false, not {}", kind_of(v)),
    };
    let messages = match field(obj, "errorMsgs") {
        None => vec![],
        Some(Value::Array(a)) => a
            .iter()
            .map(|m| match m {
                Value::String(s) => Ok(s.clone()),
                v => Err(anyhow!("`errorMsgs` must hold strings, not {}", kind_of(v))),
            })
            .collect::<Result<_>>()?,
        Some(v) => bail!("`errorMsgs` must be a list of strings, not {}", kind_of(v)),
    };
    if failed {
        return Ok(Err(Problem::Failed(messages)));
    }
    let mut universe = BTreeMap::new();
    match field(obj, "universe") {
        None => {}
        Some(Value::Object(u)) => {
            for (path, content) in u {
                match content {
                    Value::String(s) => {
                        universe.insert(path.clone(), s.clone());
                    }
                    v => bail!(
                        "`universe` maps each path to the file's text, but {path:?} has {}",
                        kind_of(v)
                    ),
                }
            }
        }
        Some(v) => bail!("`universe` must be an object, not {}", kind_of(v)),
    }
    let mut flags = vec![];
    match field(obj, "flags") {
        None => {}
        Some(Value::Array(list)) => {
            for (i, f) in list.iter().enumerate() {
                let Value::Object(f) = f else {
                    bail!("`flags[{i}]` must be an object, not {}", kind_of(f));
                };
                let at = format!("flags[{i}].");
                let kind = match string(f, "type", &at)?.as_str() {
                    "bool" => FlagType::Bool,
                    "int" => FlagType::Int,
                    "float" => FlagType::Float,
                    _ => FlagType::String,
                };
                flags.push(Flag {
                    name: string(f, "name", &at)?,
                    kind,
                    default: string(f, "default", &at)?,
                    usage: string(f, "usage", &at)?,
                });
            }
        }
        Some(v) => bail!("`flags` must be a list, not {}", kind_of(v)),
    }
    let metadata = match field(obj, "metadata") {
        None => Metadata::default(),
        Some(Value::Object(m)) => Metadata {
            description: string(m, "description", "metadata.")?,
            examples: string(m, "examples", "metadata.")?,
        },
        Some(v) => bail!("`metadata` must be an object, not {}", kind_of(v)),
    };
    Ok(Ok(Response {
        universe,
        flags,
        metadata,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_read_as_go_reads_them() {
        let r = parse(
            br#"{"apiVersion":"v1alpha1","command":"init","universe":{"a.txt":"x\n"},"extra":1,
                "Flags":[{"Name":"team","Type":"string","Default":"web","Usage":"who"},{"name":"n","type":"int"},
                         {"name":"f","type":"weird"}],
                "metadata":{"description":"d","examples":null},"errorMsgs":null}"#,
        )
        .unwrap();
        assert_eq!(r.universe["a.txt"], "x\n");
        assert_eq!(r.flags.len(), 3);
        assert_eq!(
            (
                r.flags[0].name.as_str(),
                r.flags[0].kind,
                r.flags[0].default.as_str()
            ),
            ("team", FlagType::String, "web")
        );
        assert_eq!(r.flags[1].kind, FlagType::Int);
        assert_eq!(r.flags[2].kind, FlagType::String);
        assert_eq!(r.metadata.description, "d");
        assert_eq!(r.metadata.examples, "");
        // Nothing but the envelope: an empty universe.
        assert!(parse(b"{}\n").unwrap().universe.is_empty());
    }

    #[test]
    fn errors_and_bad_responses_are_told_apart() {
        match parse(br#"{"error":true,"errorMsgs":["one","two"]}"#) {
            Err(Problem::Failed(m)) => assert_eq!(m, ["one", "two"]),
            other => panic!("{other:?}"),
        }
        for (out, needle) in [
            (&b"hello"[..], "not one JSON PluginResponse"),
            (b"", "printed nothing"),
            (b"[1]", "a list, not a JSON object"),
            (br#"{"universe":{"a":1}}"#, "\"a\" has a number"),
            (br#"{"universe":[]}"#, "`universe` must be an object"),
            (br#"{"error":"yes"}"#, "`error` must be true or false"),
            (b"{} {}", "not one JSON PluginResponse"),
        ] {
            match parse(out) {
                Err(Problem::Invalid(m)) => assert!(m.contains(needle), "{m}"),
                other => panic!("{:?}: {other:?}", String::from_utf8_lossy(out)),
            }
        }
    }

    #[test]
    fn requests_carry_kubebuilders_fields() {
        let universe = BTreeMap::from([("go.mod".to_string(), "module x\n".to_string())]);
        let config = serde_json::json!({"domain": "example.com"});
        let args = vec!["--team".to_string(), "web".to_string()];
        let chain = vec!["foo.acme.io/v1".to_string()];
        let r = Request {
            api_version: API_VERSION,
            args: &args,
            command: "create api",
            universe: &universe,
            plugin_chain: &chain,
            config: Some(&config),
        };
        let v: Value = serde_json::from_slice(&r.to_json()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"apiVersion": "v1alpha1", "args": ["--team", "web"], "command": "create api",
                "universe": {"go.mod": "module x\n"}, "pluginChain": ["foo.acme.io/v1"],
                "config": {"domain": "example.com"}})
        );
        let empty = Request {
            plugin_chain: &[],
            config: None,
            ..r
        };
        let v: Value = serde_json::from_slice(&empty.to_json()).unwrap();
        assert!(v.get("pluginChain").is_none() && v.get("config").is_none());
    }
}
