//! Prints the Go client's event types, generated from the JSON Schema of the types that write
//! the stream: `cargo run -q -p mesh-adopt-runtime --example events-go > clients/go/events_gen.go`
//! (what `just go-types` does; a test fails while the file differs from what this prints).
//!
//! It walks the schema `just schema` writes (every kind, field, enum and union, with their
//! descriptions as doc comments), and reads one thing more from the same types' schema as they
//! are *written* (schemars' serialize contract): which fields are always on a line. A field
//! always written, even as `null`, is kept without `omitempty`; one a line leaves out when it
//! is empty gets `omitempty` (and a pointer, for a struct). So a line decoded into these types
//! and encoded again is the line it was, field for field.
//!
//! The schema's shapes, and what each becomes:
//! - an object: a struct, read strictly (an unknown field or a missing required one is an
//!   error), with its tag (`event`, `action`, …) written and checked by its methods;
//! - a `oneOf` of string constants: a string type and one constant a value;
//! - a `oneOf` of objects told apart by one constant field: a union, a struct holding one of
//!   its variant structs in `Value`;
//! - a `oneOf` of objects each with one key (`{"ok": …}` or `{"error": …}`): a union told
//!   apart by that key;
//! - an `anyOf` of other shapes: a union tried in order, `null` being no variant;
//! - a shape or `null`: a pointer;
//! - an object with properties and a `oneOf` beside them (a flattened enum): a struct whose
//!   union field's variant writes its fields beside the struct's own.
//!
//! A shape it does not know stops it, naming where: a new kind of shape needs the generator
//! taught, never the output edited.

use std::collections::BTreeMap;
use std::fmt::Write;

use schemars::generate::SchemaSettings;
use serde_json::Value;

fn main() {
    let schema = mesh_adopt_runtime::events::json_schema();
    let written = serde_json::to_value(
        SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<mesh_adopt_runtime::events::Event>(),
    )
    .expect("a JSON Schema serialises");
    let mut go = Generator { schema: &schema, written: &written, types: BTreeMap::new(), order: Vec::new() };
    go.events();
    print!("{}", go.finish());
}

/// A Go type a field or a variant has.
#[derive(Debug, Clone, PartialEq)]
enum GoType {
    /// A type this file declares: a struct, a union or an enum.
    Named(String),
    /// A type Go has: `string`, `bool`, `uint32`, `float64`, …
    Builtin(&'static str),
    Slice(Box<GoType>),
    Pointer(Box<GoType>),
}

impl GoType {
    fn go(&self) -> String {
        match self {
            GoType::Named(name) => name.clone(),
            GoType::Builtin(name) => name.to_string(),
            GoType::Slice(inner) => format!("[]{}", inner.go()),
            GoType::Pointer(inner) => format!("*{}", inner.go()),
        }
    }
}

/// A struct's field.
struct Field {
    key: String,
    doc: Option<String>,
    ty: GoType,
    /// Always on a line (as the types serialise): no `omitempty`.
    always: bool,
}

/// A declaration of this file.
enum Decl {
    Struct {
        doc: Option<String>,
        /// The tag key and value the struct's lines carry (`"event": "lock"`).
        tag: Option<(String, String)>,
        fields: Vec<Field>,
        /// Keys a line must hold (the tag aside), as the types read.
        required: Vec<String>,
        /// A union whose variant's fields are written beside these.
        flattened: Option<(String, GoType)>,
        /// The unions this struct is a variant of: a marker method each.
        variant_of: Vec<String>,
        /// The event kind, for one of the stream's lines.
        event: Option<String>,
    },
    Enum {
        doc: Option<String>,
        values: Vec<(String, Option<String>)>,
    },
    Union {
        doc: Option<String>,
        how: UnionKind,
        /// The variants: (the tag value or key, the variant's type), in the schema's order.
        variants: Vec<(String, GoType)>,
    },
    /// A primitive variant of an untagged union (`CallValueString string`).
    Alias {
        doc: Option<String>,
        of: GoType,
        variant_of: Vec<String>,
    },
}

#[derive(Clone, PartialEq)]
enum UnionKind {
    /// Told apart by the value of the key it names.
    Tagged(String),
    /// Told apart by which single key the object holds.
    Keyed,
    /// Each tried in order; `null` is no variant.
    Untagged { nullable: bool },
}

struct Generator<'a> {
    schema: &'a Value,
    written: &'a Value,
    types: BTreeMap<String, Decl>,
    order: Vec<String>,
}

fn camel(word: &str) -> String {
    word.split(['_', '-', ' '])
        .filter(|part| !part.is_empty())
        .map(|part| match part {
            "id" => "ID".to_string(),
            "url" => "URL".to_string(),
            "json" => "JSON".to_string(),
            "sha256" => "SHA256".to_string(),
            "pid" => "PID".to_string(),
            _ => {
                let mut chars = part.chars();
                let first = chars.next().unwrap().to_ascii_uppercase();
                std::iter::once(first).chain(chars).collect()
            }
        })
        .collect()
}

fn description(schema: &Value) -> Option<String> {
    schema.get("description").and_then(Value::as_str).map(str::to_string)
}

/// The tag every variant of a `oneOf` of objects holds as a string constant, if there is one.
fn common_tag(variants: &[Value]) -> Option<String> {
    let first = variants.first()?.get("properties")?.as_object()?;
    first
        .iter()
        .filter(|(_, p)| p.get("const").is_some_and(Value::is_string))
        .map(|(key, _)| key.clone())
        .find(|key| variants.iter().all(|v| v["properties"][key.as_str()]["const"].is_string()))
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

impl Generator<'_> {
    /// Declares `name`, once, in the order met.
    fn declare(&mut self, name: &str, decl: Decl) {
        assert!(!self.types.contains_key(name), "the Go type `{name}` would be declared twice");
        self.order.push(name.to_string());
        self.types.insert(name.to_string(), decl);
    }

    /// The stream's kinds: one struct an event, tagged by `event`.
    fn events(&mut self) {
        let kinds = self.schema["oneOf"].as_array().expect("the schema is a oneOf of the events").clone();
        for (index, kind) in kinds.iter().enumerate() {
            let event = kind["properties"]["event"]["const"].as_str().expect("each event names its kind").to_string();
            let name = format!("{}Event", camel(&event));
            self.object(&name, kind, &format!("/oneOf/{index}"), Some(("event".into(), event.clone())), Some(event));
        }
    }

    /// The type of a schema met at `pointer`, declaring what it needs under `hint`.
    fn type_of(&mut self, schema: &Value, pointer: &str, hint: &str) -> GoType {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("{pointer}: a $ref outside $defs"));
            return self.definition(name);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = schema.get(key).and_then(Value::as_array) {
                let inner: Vec<(usize, &Value)> = options.iter().enumerate().filter(|(_, o)| !is_null(o)).collect();
                if inner.len() == 1 && inner.len() < options.len() && schema.get("properties").is_none() {
                    let (at, only) = inner[0];
                    return GoType::Pointer(Box::new(self.type_of(only, &format!("{pointer}/{key}/{at}"), hint)));
                }
            }
        }
        if schema.get("oneOf").is_some() || schema.get("anyOf").is_some() || schema.get("properties").is_some() {
            let name = hint.to_string();
            if !self.types.contains_key(&name) {
                self.shape(&name, schema, pointer);
            }
            return GoType::Named(name);
        }
        match schema.get("type") {
            Some(Value::String(ty)) => self.primitive(ty, schema, pointer, hint),
            Some(Value::Array(types)) => {
                let named: Vec<&str> = types.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
                assert!(named.len() == 1, "{pointer}: types {types:?}");
                let inner = self.primitive(named[0], schema, pointer, hint);
                if named.len() < types.len() { GoType::Pointer(Box::new(inner)) } else { inner }
            }
            _ => panic!("{pointer}: a schema this generator does not know: {schema}"),
        }
    }

    fn primitive(&mut self, ty: &str, schema: &Value, pointer: &str, hint: &str) -> GoType {
        match ty {
            "string" => GoType::Builtin("string"),
            "boolean" => GoType::Builtin("bool"),
            "number" => GoType::Builtin("float64"),
            "integer" => GoType::Builtin(match schema.get("format").and_then(Value::as_str) {
                Some("uint8") => "uint8",
                Some("uint16") => "uint16",
                Some("uint32") => "uint32",
                Some("uint64") | Some("uint") => "uint64",
                Some("int8") => "int8",
                Some("int16") => "int16",
                Some("int32") => "int32",
                _ => "int64",
            }),
            "array" => {
                let items = schema.get("items").unwrap_or_else(|| panic!("{pointer}: an array with no items"));
                GoType::Slice(Box::new(self.type_of(items, &format!("{pointer}/items"), hint)))
            }
            "object" => self.type_of(&serde_json::json!({"properties": {}, "type": "object"}), pointer, hint),
            other => panic!("{pointer}: a type this generator does not know: {other}"),
        }
    }

    /// A type of `$defs`, declared the first time it is named.
    fn definition(&mut self, name: &str) -> GoType {
        if !self.types.contains_key(name) {
            let schema = self.schema["$defs"][name].clone();
            assert!(!schema.is_null(), "`{name}` is not in $defs");
            self.shape(name, &schema, &format!("/$defs/{name}"));
        }
        GoType::Named(name.to_string())
    }

    /// Declares `name` as what `schema` is: a struct, an enum or a union.
    fn shape(&mut self, name: &str, schema: &Value, pointer: &str) {
        if schema.get("properties").is_some() {
            return self.object(name, schema, pointer, None, None);
        }
        let (key, options) = match (schema.get("oneOf"), schema.get("anyOf")) {
            (Some(Value::Array(o)), _) => ("oneOf", o.clone()),
            (_, Some(Value::Array(o))) => ("anyOf", o.clone()),
            _ => panic!("{pointer}: a schema this generator does not know: {schema}"),
        };
        let doc = description(schema);
        if key == "oneOf" && options.iter().all(|o| o.get("const").is_some_and(Value::is_string)) {
            let values = options.iter().map(|o| (o["const"].as_str().unwrap().to_string(), description(o))).collect();
            return self.declare(name, Decl::Enum { doc, values });
        }
        self.union(name, doc, key, &options, pointer);
    }

    /// Declares the union `name` of `options` (at `pointer/key`) and each of its variants.
    fn union(&mut self, name: &str, doc: Option<String>, key: &str, options: &[Value], pointer: &str) {
        let objects = options.iter().all(|o| o.get("properties").is_some());
        let how = if key == "oneOf"
            && objects
            && let Some(tag) = common_tag(options)
        {
            UnionKind::Tagged(tag)
        } else if key == "oneOf"
            && objects
            && options.iter().all(|o| o["required"].as_array().is_some_and(|r| r.len() == 1))
        {
            UnionKind::Keyed
        } else {
            UnionKind::Untagged { nullable: options.iter().any(is_null) }
        };
        // Declared before its variants, so a variant may name it.
        self.declare(name, Decl::Union { doc, how: how.clone(), variants: Vec::new() });
        let mut variants = Vec::new();
        for (index, option) in options.iter().enumerate() {
            let at = format!("{pointer}/{key}/{index}");
            match &how {
                UnionKind::Tagged(tag) => {
                    let value = option["properties"][tag.as_str()]["const"].as_str().unwrap().to_string();
                    let variant = format!("{name}{}", camel(&value));
                    self.object(&variant, option, &at, Some((tag.clone(), value.clone())), None);
                    self.mark(&variant, name);
                    variants.push((value, GoType::Named(variant)));
                }
                UnionKind::Keyed => {
                    let only = option["required"][0].as_str().unwrap().to_string();
                    let variant = format!("{name}{}", camel(&only));
                    self.object(&variant, option, &at, None, None);
                    self.mark(&variant, name);
                    variants.push((only, GoType::Named(variant)));
                }
                UnionKind::Untagged { .. } if is_null(option) => {}
                UnionKind::Untagged { .. } => {
                    let ty = self.type_of(option, &at, &format!("{name}Variant{index}"));
                    let variant = match ty {
                        GoType::Named(variant) => variant,
                        GoType::Builtin(builtin) => {
                            let variant = format!("{name}{}", camel(builtin));
                            let doc = Some(format!("A {name} that is a JSON {builtin}."));
                            self.declare(&variant, Decl::Alias { doc, of: ty.clone(), variant_of: Vec::new() });
                            variant
                        }
                        other => panic!("{at}: an untagged variant of type {other:?}"),
                    };
                    self.mark(&variant, name);
                    variants.push((variant.clone(), GoType::Named(variant)));
                }
            }
        }
        if let Some(Decl::Union { variants: declared, .. }) = self.types.get_mut(name) {
            *declared = variants;
        }
    }

    /// Records that `variant` is one of `union`'s variants.
    fn mark(&mut self, variant: &str, union: &str) {
        match self.types.get_mut(variant) {
            Some(Decl::Struct { variant_of, .. }) | Some(Decl::Alias { variant_of, .. }) => {
                variant_of.push(union.to_string())
            }
            _ => panic!("`{variant}`, a variant of `{union}`, is not a struct"),
        }
    }

    /// The keys the same object's schema, as the types are written, always holds.
    fn always_written(&self, pointer: &str, schema: &Value) -> Vec<String> {
        let from = self.written.pointer(pointer).filter(|w| w.get("properties").is_some()).unwrap_or(schema);
        from["required"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
    }

    /// Declares the struct `name` of the object `schema` at `pointer`.
    fn object(
        &mut self,
        name: &str,
        schema: &Value,
        pointer: &str,
        tag: Option<(String, String)>,
        event: Option<String>,
    ) {
        let always = self.always_written(pointer, schema);
        let tag_key = tag.as_ref().map(|(key, _)| key.clone());
        let required: Vec<String> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|key| Some(*key) != tag_key.as_deref())
            .map(str::to_string)
            .collect();
        let mut fields = Vec::new();
        let properties = schema["properties"].as_object().cloned().unwrap_or_default();
        // In the order the types write them: required first, as schemars lists them, then the rest.
        let mut keys: Vec<String> =
            schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
        keys.extend(properties.keys().filter(|k| !keys.contains(k)).cloned().collect::<Vec<_>>());
        for key in keys {
            if Some(&key) == tag_key.as_ref() {
                continue;
            }
            let property = &properties[&key];
            let at = format!("{pointer}/properties/{key}");
            let mut ty = self.type_of(property, &at, &format!("{name}{}", camel(&key)));
            let always = always.contains(&key);
            if !always
                && let GoType::Named(inner) = &ty
                && !matches!(self.types.get(inner), Some(Decl::Enum { .. }))
            {
                ty = GoType::Pointer(Box::new(ty));
            }
            fields.push(Field { key, doc: description(property), ty, always });
        }
        let flattened = schema.get("oneOf").and_then(Value::as_array).map(|options| {
            // The enum flattened here may be one of `$defs` too (the same shape): that type, then.
            let known = self.schema["$defs"]
                .as_object()
                .into_iter()
                .flatten()
                .find(|(_, def)| def.get("oneOf") == schema.get("oneOf") && def.get("properties").is_none())
                .map(|(def, _)| def.clone());
            let union = match known {
                Some(def) => {
                    self.definition(&def);
                    def
                }
                None => {
                    let tag = common_tag(options).unwrap_or_else(|| panic!("{pointer}: a flattened enum with no tag"));
                    let union = camel(&tag);
                    self.union(&union, None, "oneOf", options, pointer);
                    union
                }
            };
            (union.clone(), GoType::Named(union))
        });
        self.declare(
            name,
            Decl::Struct { doc: description(schema), tag, fields, required, flattened, variant_of: Vec::new(), event },
        );
    }

    /// The whole file.
    fn finish(self) -> String {
        let title = self.schema["title"].as_str().unwrap_or_default();
        let version: u32 = title.rsplit(' ').next().and_then(|n| n.parse().ok()).expect("the title names the schema");
        let mut out = String::new();
        out.push_str("// Code generated by `just go-types` (host/runtime/examples/events-go.rs) from the types that\n");
        out.push_str("// write the event stream; DO NOT EDIT.\n\npackage meshadopt\n\n");
        out.push_str("import (\n\t\"encoding/json\"\n\t\"fmt\"\n)\n\n");
        out.push_str("// SchemaVersion is the version of the stream these types read (the `run` event's `schema`):\n");
        out.push_str("// a stream of another version is refused rather than misread.\n");
        writeln!(out, "const SchemaVersion = {version}\n").unwrap();
        self.event_interface(&mut out);
        for name in &self.order {
            let decl = &self.types[name];
            match decl {
                Decl::Struct { .. } => emit_struct(&mut out, name, decl),
                Decl::Enum { .. } => emit_enum(&mut out, name, decl),
                Decl::Union { .. } => emit_union(&mut out, name, decl),
                Decl::Alias { .. } => emit_alias(&mut out, name, decl),
            }
        }
        self.decoder(&mut out);
        while out.ends_with("\n\n") {
            out.pop();
        }
        out
    }

    fn event_interface(&self, out: &mut String) {
        out.push_str("// Event is one line of the stream, one of the *…Event types: switch on its type, or on\n");
        out.push_str(
            "// Kind, its `event`.\ntype Event interface {\n\t// Kind is the line's `event`.\n\tKind() string\n}\n\n",
        );
    }

    /// `Decode`: a line to its event, by its `event`.
    fn decoder(&self, out: &mut String) {
        out.push_str("// Decode reads one line of the stream as the event its `event` names, strictly: a field\n");
        out.push_str("// this version does not know, or one it needs missing, is an error, never dropped.\n");
        out.push_str("func Decode(line []byte) (Event, error) {\n");
        out.push_str("\tkind, err := peekTag(line, \"event\")\n\tif err != nil {\n\t\treturn nil, err\n\t}\n");
        out.push_str("\tvar event Event\n\tswitch kind {\n");
        for name in &self.order {
            if let Decl::Struct { event: Some(event), .. } = &self.types[name] {
                writeln!(out, "\tcase {event:?}:\n\t\tevent = new({name})").unwrap();
            }
        }
        out.push_str("\tdefault:\n\t\treturn nil, fmt.Errorf(\"an event of the kind %q, which this version does not know\", kind)\n\t}\n");
        out.push_str("\tif err := strict(line, event); err != nil {\n\t\treturn nil, fmt.Errorf(\"a %q event: %w\", kind, err)\n\t}\n");
        out.push_str("\treturn event, nil\n}\n");
    }
}

/// A struct: its fields, then the methods that write its tag and read it strictly, and its
/// markers as a variant.
fn emit_struct(out: &mut String, name: &str, decl: &Decl) {
    let Decl::Struct { doc, tag, fields, required, flattened, variant_of, event } = decl else { unreachable!() };
    doc_comment(out, "", name, doc.as_deref());
    if fields.is_empty() && flattened.is_none() {
        writeln!(out, "type {name} struct{{}}\n").unwrap();
    } else {
        writeln!(out, "type {name} struct {{").unwrap();
        let mut first = true;
        for field in fields {
            if !first {
                out.push('\n');
            }
            first = false;
            for line in field.doc.as_deref().unwrap_or("").lines() {
                comment_line(out, "\t", line);
            }
            let omit = if field.always { "" } else { ",omitempty" };
            writeln!(out, "\t{} {} `json:\"{}{omit}\"`", camel(&field.key), field.ty.go(), field.key).unwrap();
        }
        if let Some((union, ty)) = flattened {
            if !first {
                out.push('\n');
            }
            writeln!(out, "\t// {union} is written beside the fields above: its variant's fields and tag.").unwrap();
            writeln!(out, "\t{union} {} `json:\"-\"`", ty.go()).unwrap();
        }
        out.push_str("}\n\n");
    }
    let (tag_key, tag_value) = tag.clone().unwrap_or_default();
    let quoted = |list: &[String]| {
        if list.is_empty() {
            "nil".to_string()
        } else {
            format!("[]string{{{}}}", list.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", "))
        }
    };
    let (flat_value, flat_ptr, own) = match flattened {
        Some((union, _)) => {
            let mut own: Vec<String> = fields.iter().map(|f| f.key.clone()).collect();
            if !tag_key.is_empty() {
                own.push(tag_key.clone());
            }
            (format!("v.{union}"), format!("&v.{union}"), quoted(&own))
        }
        None => ("nil".into(), "nil".into(), "nil".into()),
    };
    let what = if tag_key.is_empty() { String::new() } else { format!(" with its `{tag_key}`") };
    writeln!(out, "// MarshalJSON writes the {name}{what}.").unwrap();
    writeln!(out, "func (v {name}) MarshalJSON() ([]byte, error) {{").unwrap();
    writeln!(out, "\ttype fields {name}").unwrap();
    writeln!(out, "\treturn encodeObject({tag_key:?}, {tag_value:?}, fields(v), {flat_value})").unwrap();
    out.push_str("}\n\n");
    writeln!(out, "// UnmarshalJSON reads a {name} strictly: no field it does not know, none it needs missing.")
        .unwrap();
    writeln!(out, "func (v *{name}) UnmarshalJSON(data []byte) error {{").unwrap();
    writeln!(out, "\ttype fields {name}").unwrap();
    writeln!(
        out,
        "\treturn decodeObject(data, {tag_key:?}, {tag_value:?}, {}, (*fields)(v), {own}, {flat_ptr})",
        quoted(required)
    )
    .unwrap();
    out.push_str("}\n\n");
    for union in variant_of {
        writeln!(out, "func (*{name}) is{union}() {{}}\n").unwrap();
    }
    // What mends it, read the same way from whatever holds one, so a remedy added
    // to an event or an outcome reaches an installer's errors with no edit.
    if let Some(field) = fields.iter().find(|f| f.key == "remedy") {
        let take = match &field.ty {
            GoType::Pointer(_) => "v.Remedy",
            _ => "&v.Remedy",
        };
        writeln!(out, "// RemedyOf is what mends what the {name} says, nil when the operator need not act.").unwrap();
        writeln!(out, "func (v *{name}) RemedyOf() *Remedy {{ return {take} }}\n").unwrap();
    }
    if let Some(event) = event {
        writeln!(out, "// Kind is {event:?}, the line's `event`.").unwrap();
        writeln!(out, "func (*{name}) Kind() string {{ return {event:?} }}\n").unwrap();
    }
}

/// A string type, a constant a value, and a reader that refuses a value it does not know.
fn emit_enum(out: &mut String, name: &str, decl: &Decl) {
    let Decl::Enum { doc, values } = decl else { unreachable!() };
    doc_comment(out, "", name, doc.as_deref());
    writeln!(out, "type {name} string\n").unwrap();
    out.push_str("const (\n");
    for (index, (value, doc)) in values.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        doc_comment(out, "\t", &format!("{name}{}", camel(value)), doc.as_deref());
        writeln!(out, "\t{name}{} {name} = {value:?}", camel(value)).unwrap();
    }
    out.push_str(")\n\n");
    writeln!(out, "// UnmarshalJSON reads a {name}, refusing a value this version does not know.").unwrap();
    writeln!(out, "func (v *{name}) UnmarshalJSON(data []byte) error {{").unwrap();
    out.push_str("\tvar s string\n\tif err := json.Unmarshal(data, &s); err != nil {\n\t\treturn err\n\t}\n");
    out.push_str("\tswitch s {\n");
    let listed: Vec<String> = values.iter().map(|(v, _)| format!("{v:?}")).collect();
    writeln!(out, "\tcase {}:", listed.join(", ")).unwrap();
    writeln!(out, "\t\t*v = {name}(s)\n\t\treturn nil\n\t}}").unwrap();
    writeln!(out, "\treturn fmt.Errorf(\"not a {name}: %q\", s)").unwrap();
    out.push_str("}\n\n");
}

/// A union: the struct holding its variant, the variants' interface, and the methods that
/// write the variant and read the one a line holds.
fn emit_union(out: &mut String, name: &str, decl: &Decl) {
    let Decl::Union { doc, how, variants } = decl else { unreachable!() };
    let listed: Vec<String> = variants.iter().map(|(_, ty)| format!("*{}", ty.go())).collect();
    let mut text = doc.clone().unwrap_or_default();
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(&format!("Its Value is one of {}", listed.join(", ")));
    if matches!(how, UnionKind::Untagged { nullable: true }) {
        text.push_str(", or nil for `null`");
    }
    text.push('.');
    doc_comment(out, "", name, Some(&text));
    writeln!(out, "type {name} struct {{").unwrap();
    writeln!(out, "\t// Value is the variant the line holds.").unwrap();
    writeln!(out, "\tValue {name}Variant\n}}\n").unwrap();
    writeln!(out, "// {name}Variant is one of a {name}'s variants.").unwrap();
    writeln!(out, "type {name}Variant interface {{\n\tis{name}()\n}}\n").unwrap();
    writeln!(out, "// MarshalJSON writes the variant the {name} holds.").unwrap();
    writeln!(out, "func (u {name}) MarshalJSON() ([]byte, error) {{").unwrap();
    let nullable = matches!(how, UnionKind::Untagged { nullable: true });
    writeln!(out, "\treturn encodeVariant({name:?}, u.Value, {nullable})\n}}\n").unwrap();
    writeln!(out, "// UnmarshalJSON reads the variant the line holds.").unwrap();
    writeln!(out, "func (u *{name}) UnmarshalJSON(data []byte) error {{").unwrap();
    match how {
        UnionKind::Tagged(tag) => {
            writeln!(out, "\ttag, err := peekTag(data, {tag:?})\n\tif err != nil {{\n\t\treturn err\n\t}}").unwrap();
            out.push_str("\tswitch tag {\n");
            for (value, ty) in variants {
                writeln!(out, "\tcase {value:?}:").unwrap();
                writeln!(out, "\t\tv := new({})\n\t\tu.Value = v\n\t\treturn json.Unmarshal(data, v)", ty.go())
                    .unwrap();
            }
            writeln!(
                out,
                "\t}}\n\treturn fmt.Errorf(\"a {name} with the {tag} %q, which this version does not know\", tag)"
            )
            .unwrap();
        }
        UnionKind::Keyed => {
            out.push_str("\tkey, err := onlyKey(data)\n\tif err != nil {\n\t\treturn err\n\t}\n");
            out.push_str("\tswitch key {\n");
            for (value, ty) in variants {
                writeln!(out, "\tcase {value:?}:").unwrap();
                writeln!(out, "\t\tv := new({})\n\t\tu.Value = v\n\t\treturn json.Unmarshal(data, v)", ty.go())
                    .unwrap();
            }
            writeln!(out, "\t}}\n\treturn fmt.Errorf(\"a {name} keyed %q, which this version does not know\", key)")
                .unwrap();
        }
        UnionKind::Untagged { nullable } => {
            if *nullable {
                out.push_str("\tif isNull(data) {\n\t\tu.Value = nil\n\t\treturn nil\n\t}\n");
            }
            let tries: Vec<String> = variants.iter().map(|(_, ty)| format!("new({})", ty.go())).collect();
            writeln!(out, "\tfor _, v := range []{name}Variant{{{}}} {{", tries.join(", ")).unwrap();
            out.push_str("\t\tif strict(data, v) == nil {\n\t\t\tu.Value = v\n\t\t\treturn nil\n\t\t}\n\t}\n");
            writeln!(out, "\treturn fmt.Errorf(\"not a {name}: %s\", data)").unwrap();
        }
    }
    out.push_str("}\n\n");
}

/// A primitive variant of an untagged union, and its markers.
fn emit_alias(out: &mut String, name: &str, decl: &Decl) {
    let Decl::Alias { doc, of, variant_of } = decl else { unreachable!() };
    doc_comment(out, "", name, doc.as_deref());
    writeln!(out, "type {name} {}\n", of.go()).unwrap();
    for union in variant_of {
        writeln!(out, "func (*{name}) is{union}() {{}}\n").unwrap();
    }
}

fn comment_line(out: &mut String, indent: &str, line: &str) {
    let line = line.trim_end();
    if line.is_empty() {
        writeln!(out, "{indent}//").unwrap();
    } else {
        writeln!(out, "{indent}// {line}").unwrap();
    }
}

/// A doc comment that begins with the name it documents, as Go's are read.
fn doc_comment(out: &mut String, indent: &str, name: &str, doc: Option<&str>) {
    let doc = doc.unwrap_or("").trim();
    let mut lines = doc.lines();
    match lines.next() {
        Some(first) => comment_line(out, indent, &format!("{name}: {first}")),
        None => comment_line(out, indent, &format!("{name} is as the stream writes it.")),
    }
    for line in lines {
        comment_line(out, indent, line);
    }
}
