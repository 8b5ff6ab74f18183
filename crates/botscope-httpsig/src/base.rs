//! Signature inputs and the signature base (RFC 9421 §2.3–2.5).

use sfv::{BareItem, Dictionary, FieldType, Item, ListEntry, Parser};

use crate::Reason;
use crate::message::{Request, Response, field};

/// The largest `Signature-Input`, `Signature` or `Signature-Agent` field
/// read, in bytes: a handful of signatures fit in a few hundred.
pub const MAX_FIELD_BYTES: usize = 8 * 1024;
/// The most signatures a message may carry.
pub const MAX_SIGNATURES: usize = 8;
/// The most components one signature may cover.
pub const MAX_COMPONENTS: usize = 32;

/// One signature's input: the covered components and the parameters, as
/// `Signature-Input` gives them under a label.
#[derive(Debug, Clone)]
pub struct Input {
    /// The label (`sig1`).
    pub label: String,
    /// The covered components, each an sf-string with its parameters.
    pub components: Vec<Item>,
    /// The parameters, in order.
    pub params: sfv::Parameters,
}

impl Input {
    /// An integer parameter.
    pub fn int(&self, name: &str) -> Result<Option<i64>, Reason> {
        match self.params.get(name) {
            None => Ok(None),
            Some(BareItem::Integer(i)) => Ok(Some(i64::from(*i))),
            Some(_) => Err(Reason::Malformed(format!("`{name}` is not an integer"))),
        }
    }

    /// A string parameter.
    pub fn string(&self, name: &str) -> Result<Option<&str>, Reason> {
        match self.params.get(name) {
            None => Ok(None),
            Some(BareItem::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(Reason::Malformed(format!("`{name}` is not a string"))),
        }
    }

    /// Whether the component `name` (without parameters, or with the
    /// `key` parameter given) is covered.
    pub fn covers(&self, name: &str) -> bool {
        self.components
            .iter()
            .any(|c| matches!(&c.bare_item, BareItem::String(s) if s.as_str() == name))
    }

    /// The `@signature-params` value: the inner list serialized.
    pub fn params_value(&self) -> String {
        let mut out = String::with_capacity(128);
        self.write_params_value(&mut out);
        out
    }

    /// [`Input::params_value`], written at the end of `out`.
    fn write_params_value(&self, out: &mut String) {
        let mut list = sfv::ListSerializer::with_buffer(out);
        let mut inner = list.inner_list();
        inner.items(&self.components);
        _ = inner.finish().parameters(&self.params);
        _ = list.finish();
    }
}

/// Parses a dictionary field, within [`MAX_FIELD_BYTES`].
pub(crate) fn dictionary(name: &str, value: &str) -> Result<Dictionary, Reason> {
    if value.len() > MAX_FIELD_BYTES {
        return Err(Reason::Malformed(format!(
            "{name} is {} bytes, more than {MAX_FIELD_BYTES}",
            value.len()
        )));
    }
    let d: Dictionary = Parser::new(value)
        .parse()
        .map_err(|e| Reason::Malformed(format!("{name}: {e}")))?;
    if d.len() > MAX_SIGNATURES * 2 {
        return Err(Reason::Malformed(format!("{name} has {} members", d.len())));
    }
    Ok(d)
}

/// The inputs of `Signature-Input`.
pub fn inputs(value: &str) -> Result<Vec<Input>, Reason> {
    let d = dictionary("Signature-Input", value)?;
    let mut out = Vec::with_capacity(d.len());
    for (label, entry) in d {
        let ListEntry::InnerList(list) = entry else {
            return Err(Reason::Malformed(format!(
                "Signature-Input `{}` is not an inner list",
                label.as_str()
            )));
        };
        if list.items.len() > MAX_COMPONENTS {
            return Err(Reason::Malformed(format!(
                "`{}` covers {} components, more than {MAX_COMPONENTS}",
                label.as_str(),
                list.items.len()
            )));
        }
        for c in &list.items {
            if !matches!(c.bare_item, BareItem::String(_)) {
                return Err(Reason::Malformed(format!(
                    "a component of `{}` is not a string",
                    label.as_str()
                )));
            }
        }
        out.push(Input {
            label: label.as_str().to_owned(),
            components: list.items,
            params: list.params,
        });
    }
    Ok(out)
}

/// The signature bytes of `label` in `Signature`.
pub fn signature(value: &str, label: &str) -> Result<Vec<u8>, Reason> {
    let d = dictionary("Signature", value)?;
    match d.get(label) {
        Some(ListEntry::Item(Item {
            bare_item: BareItem::ByteSequence(b),
            ..
        })) => Ok(b.clone()),
        Some(_) => Err(Reason::Malformed(format!(
            "Signature `{label}` is not a byte sequence"
        ))),
        None => Err(Reason::Malformed(format!("no Signature for `{label}`"))),
    }
}

/// The message a signature covers.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// A request.
    Request(&'a Request),
    /// A response (with its request, for `req` components).
    Response(Response<'a>),
}

impl Target<'_> {
    fn headers(&self) -> &[(String, String)] {
        match self {
            Target::Request(r) => &r.headers,
            Target::Response(r) => r.headers,
        }
    }

    fn request(&self) -> Option<&Request> {
        match self {
            Target::Request(r) => Some(r),
            Target::Response(r) => r.request,
        }
    }
}

/// The structured type of the fields `sf` may name.
fn field_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "signature-agent"
        | "signature-input"
        | "signature"
        | "priority"
        | "content-digest"
        | "repr-digest"
        | "want-content-digest"
        | "accept-signature" => "dictionary",
        "cache-status" | "proxy-status" | "accept-ch" | "example-list" => "list",
        _ => return None,
    })
}

/// The value of one covered component.
fn component_value(target: Target<'_>, c: &Item) -> Result<String, Reason> {
    let BareItem::String(name) = &c.bare_item else {
        return Err(Reason::Malformed("a component is not a string".into()));
    };
    let name = name.as_str();
    let flag = |k: &str| matches!(c.params.get(k), Some(BareItem::Boolean(true)));
    for (k, _) in &c.params {
        if !matches!(k.as_str(), "sf" | "key" | "req" | "name") {
            return Err(Reason::UnsupportedComponent(format!(
                "\"{name}\";{}",
                k.as_str()
            )));
        }
    }
    let target = if flag("req") {
        match target.request() {
            Some(r) => Target::Request(r),
            None => return Err(Reason::ComponentMissing(format!("\"{name}\";req"))),
        }
    } else {
        target
    };
    if let Some(derived) = name.strip_prefix('@') {
        let Target::Request(r) = target else {
            return match derived {
                "status" => match target {
                    Target::Response(resp) => Ok(resp.status.to_string()),
                    Target::Request(_) => Err(Reason::ComponentMissing(name.into())),
                },
                _ => Err(Reason::ComponentMissing(format!(
                    "{name} (of a response; `req` names the request's)"
                ))),
            };
        };
        return match derived {
            "method" => Ok(r.method.clone()),
            "authority" => Ok(r.authority.clone()),
            "scheme" => Ok(r.scheme.clone()),
            "target-uri" => Ok(r.target_uri()),
            "request-target" => Ok(r.target()),
            "path" => Ok(r.path.clone()),
            "query" => Ok(format!("?{}", r.query.as_deref().unwrap_or(""))),
            "status" => Err(Reason::ComponentMissing("@status (of a request)".into())),
            _ => Err(Reason::UnsupportedComponent(name.into())),
        };
    }
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(Reason::Malformed(format!(
            "component `{name}` is not lowercase"
        )));
    }
    let value =
        field(target.headers(), name).ok_or_else(|| Reason::ComponentMissing(name.into()))?;
    if let Some(key) = c.params.get("key") {
        let BareItem::String(key) = key else {
            return Err(Reason::Malformed(format!("`{name}`'s key is not a string")));
        };
        let d = dictionary(name, &value)?;
        let member = d.get(key.as_str()).ok_or_else(|| {
            Reason::ComponentMissing(format!("\"{name}\";key=\"{}\"", key.as_str()))
        })?;
        let one: sfv::List = vec![member.clone()];
        return Ok(one.serialize().unwrap_or_default());
    }
    if flag("sf") {
        let reserialized = match field_type(name) {
            Some("dictionary") => dictionary(name, &value)?.serialize(),
            Some(_) => Parser::new(&*value)
                .parse::<sfv::List>()
                .map_err(|e| Reason::Malformed(format!("{name}: {e}")))?
                .serialize(),
            None => {
                return Err(Reason::UnsupportedComponent(format!(
                    "\"{name}\";sf (a field of unknown structure)"
                )));
            }
        };
        return Ok(reserialized.unwrap_or_default());
    }
    Ok(value.into_owned())
}

/// The signature base of `input` over `target` (RFC 9421 §2.5): one line
/// per covered component, then `@signature-params`.
pub fn signature_base(target: Target<'_>, input: &Input) -> Result<String, Reason> {
    let mut out = String::with_capacity(256);
    let mut seen: Vec<String> = Vec::with_capacity(input.components.len());
    for c in &input.components {
        let id = c.serialize();
        if seen.contains(&id) {
            return Err(Reason::Malformed(format!("component {id} covered twice")));
        }
        let value = component_value(target, c)?;
        if value.contains(['\n', '\r']) {
            return Err(Reason::Malformed(format!(
                "component {id} has a line break"
            )));
        }
        out.push_str(&id);
        out.push_str(": ");
        out.push_str(&value);
        out.push('\n');
        seen.push(id);
    }
    out.push_str("\"@signature-params\": ");
    input.write_params_value(&mut out);
    Ok(out)
}
