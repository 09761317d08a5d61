//! The argument language of `pisa-vk run`: scalar parameters (`u32:7`, `f32:1.5`,
//! `bytes:0a0b`), buffers (`f32[]:1,2,3`, `u8[16]`, `f32[]@data.bin`) and how their
//! values are printed back (text, or JSON numbers that round-trip).

use std::fmt;

/// Element types of the CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ElemType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    Bf16,
    F32,
    F64,
}

impl ElemType {
    /// Parses `u8` ... `f64`.
    pub fn parse(s: &str) -> Option<ElemType> {
        use ElemType::*;
        Some(match s {
            "u8" => U8,
            "i8" => I8,
            "u16" => U16,
            "i16" => I16,
            "u32" => U32,
            "i32" => I32,
            "u64" => U64,
            "i64" => I64,
            "f16" => F16,
            "bf16" => Bf16,
            "f32" => F32,
            "f64" => F64,
            _ => return None,
        })
    }

    /// The unsigned integer type of `width` bytes (1, 2, 4 or 8; anything else is `u8`).
    pub fn unsigned(width: u8) -> ElemType {
        match width {
            2 => ElemType::U16,
            4 => ElemType::U32,
            8 => ElemType::U64,
            _ => ElemType::U8,
        }
    }

    /// The type a `--arg`/`--set` spec names (`f32` of `f32[]:1,2`), if it names one.
    pub fn of_spec(spec: &str) -> Option<ElemType> {
        ElemType::parse(&spec[..spec.find(['[', ':'])?])
    }

    /// Size in bytes.
    pub fn size(self) -> usize {
        use ElemType::*;
        match self {
            U8 | I8 => 1,
            U16 | I16 | F16 | Bf16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F16 | ElemType::Bf16 | ElemType::F32 | ElemType::F64
        )
    }

    fn is_signed(self) -> bool {
        matches!(
            self,
            ElemType::I8 | ElemType::I16 | ElemType::I32 | ElemType::I64
        )
    }

    /// The spelling.
    pub fn name(self) -> &'static str {
        use ElemType::*;
        match self {
            U8 => "u8",
            I8 => "i8",
            U16 => "u16",
            I16 => "i16",
            U32 => "u32",
            I32 => "i32",
            U64 => "u64",
            I64 => "i64",
            F16 => "f16",
            Bf16 => "bf16",
            F32 => "f32",
            F64 => "f64",
        }
    }

    /// Encodes one value (decimal, `0x` hex bits, or for float types a decimal float;
    /// `nan`, `inf`, `-inf` too) little-endian. Errors: a message quoting a value that does
    /// not parse as the type, or does not fit in it.
    pub fn encode(self, text: &str) -> Result<Vec<u8>, String> {
        let t = text.trim();
        let bad = || format!("`{t}` is not a valid {} value", self.name());
        let size = self.size();
        if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            let v = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
            if size < 8 && v >> (size * 8) != 0 {
                return Err(format!("`{t}` does not fit in {}", self.name()));
            }
            return Ok(v.to_le_bytes()[..size].to_vec());
        }
        if self.is_float() {
            let v: f64 = match t {
                "nan" => f64::NAN,
                "inf" | "+inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                _ => t.parse().map_err(|_| bad())?,
            };
            let bits: u64 = match self {
                ElemType::F16 => half::f16::from_f64(v).to_bits() as u64,
                ElemType::Bf16 => half::bf16::from_f64(v).to_bits() as u64,
                ElemType::F32 => (v as f32).to_bits() as u64,
                _ => v.to_bits(),
            };
            return Ok(bits.to_le_bytes()[..size].to_vec());
        }
        let v: i128 = t.parse().map_err(|_| bad())?;
        let bits = size as u32 * 8;
        let (lo, hi) = if self.is_signed() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        if v < lo || v > hi {
            return Err(format!("`{t}` does not fit in {}", self.name()));
        }
        Ok((v as u128).to_le_bytes()[..size].to_vec())
    }

    /// Decodes one little-endian value.
    pub fn decode(self, b: &[u8]) -> Value {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        let u = u64::from_le_bytes(w);
        use ElemType::*;
        match self {
            U8 | U16 | U32 | U64 => Value::Unsigned(u),
            I8 => Value::Signed(u as u8 as i8 as i64),
            I16 => Value::Signed(u as u16 as i16 as i64),
            I32 => Value::Signed(u as u32 as i32 as i64),
            I64 => Value::Signed(u as i64),
            F16 => Value::Float(half::f16::from_bits(u as u16).to_f64(), 16),
            Bf16 => Value::Float(half::bf16::from_bits(u as u16).to_f64(), 16),
            F32 => Value::Float(f32::from_bits(u as u32) as f64, 32),
            F64 => Value::Float(f64::from_bits(u), 64),
        }
    }
}

/// A decoded value, for printing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An unsigned integer.
    Unsigned(u64),
    /// A signed integer.
    Signed(i64),
    /// A float and the width it came from.
    Float(f64, u32),
}

impl Value {
    /// As a JSON value: integers as integers, floats as shortest round-trip numbers, NaN and
    /// infinities as the strings `"nan"`, `"inf"`, `"-inf"`.
    pub fn to_json(self) -> String {
        match self {
            Value::Unsigned(u) => u.to_string(),
            Value::Signed(i) => i.to_string(),
            Value::Float(f, _) if f.is_nan() => "\"nan\"".into(),
            Value::Float(f, _) if f.is_infinite() => {
                if f > 0.0 {
                    "\"inf\"".into()
                } else {
                    "\"-inf\"".into()
                }
            }
            Value::Float(f, w) => {
                let s = if w == 64 {
                    format!("{f:?}")
                } else {
                    format!("{:?}", f as f32)
                };
                s
            }
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Unsigned(u) => write!(f, "{u}"),
            Value::Signed(i) => write!(f, "{i}"),
            Value::Float(x, 64) => write!(f, "{x:?}"),
            Value::Float(x, _) => write!(f, "{:?}", x as f32),
        }
    }
}

/// A parsed `--arg`.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// Raw parameter bytes.
    Scalar(Vec<u8>),
    /// A buffer whose address is the parameter.
    Buffer {
        /// Element type.
        ty: ElemType,
        /// Initial contents.
        bytes: Vec<u8>,
    },
}

/// Parses an `--arg` (or the value part of a `--set`). Cost: `TYPE[]@PATH` reads the file;
/// `TYPE[N]` allocates N zeroed elements (at most 16 GiB). Errors: a message naming what is
/// wrong (the form, an unknown type, a value, an unreadable file or one that is not a whole
/// number of elements, an element count).
pub fn parse_arg(spec: &str) -> Result<ArgSpec, String> {
    if let Some(hex) = spec.strip_prefix("bytes:") {
        return parse_hex(hex).map(ArgSpec::Scalar);
    }
    if let Some(rest) = spec.strip_prefix("addr:") {
        // An address (8 bytes) or any other spec, passed unchecked against the kind.
        if let Ok(bytes) = ElemType::U64.encode(rest) {
            return Ok(ArgSpec::Scalar(bytes));
        }
        return parse_arg(rest);
    }
    let (ty_text, rest) = match spec.find(['[', ':']) {
        Some(i) => (&spec[..i], &spec[i..]),
        None => {
            return Err(format!(
            "`{spec}`: expected TYPE:VALUE, TYPE[]:V1,V2,..., TYPE[N], TYPE[]@PATH or bytes:HEX"
        ))
        }
    };
    let ty = ElemType::parse(ty_text).ok_or_else(|| {
        format!("`{ty_text}` is not a type (u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64)")
    })?;
    if let Some(v) = rest.strip_prefix(':') {
        return ty.encode(v).map(ArgSpec::Scalar);
    }
    if let Some(list) = rest.strip_prefix("[]:") {
        let mut bytes = Vec::new();
        if !list.trim().is_empty() {
            for v in list.split(',') {
                bytes.extend(ty.encode(v)?);
            }
        }
        return Ok(ArgSpec::Buffer { ty, bytes });
    }
    if let Some(path) = rest.strip_prefix("[]@") {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
        if bytes.len() % ty.size() != 0 {
            return Err(format!(
                "`{path}` holds {} bytes, not a whole number of {}",
                bytes.len(),
                ty.name()
            ));
        }
        return Ok(ArgSpec::Buffer { ty, bytes });
    }
    if let Some(n) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| format!("`{n}` is not an element count"))?;
        let len = n
            .checked_mul(ty.size())
            .filter(|&l| l <= 1 << 34)
            .ok_or("buffer too large")?;
        return Ok(ArgSpec::Buffer {
            ty,
            bytes: vec![0; len],
        });
    }
    Err(format!(
        "`{spec}`: expected TYPE:VALUE, TYPE[]:V1,V2,..., TYPE[N], TYPE[]@PATH or bytes:HEX"
    ))
}

/// What an `--arg` spec passes, for the check against the parameter's kind
/// ([`pisa_translator::reflect::ParamKind::refusal`]): `bytes:` and `addr:` are raw (never
/// refused), `TYPE:VALUE` an integer (negative or not) or a float, `TYPE[]...` a buffer of
/// `TYPE` elements. Call it on a spec [`parse_arg`] accepted.
pub fn given_of(spec: &str) -> pisa_translator::reflect::Given {
    use pisa_translator::reflect::{Element, ElementClass, Given};
    if spec.starts_with("bytes:") || spec.starts_with("addr:") {
        return Given::Raw;
    }
    let Some(ty) = ElemType::of_spec(spec) else {
        return Given::Raw;
    };
    let bits = 8 * ty.size() as u32;
    let rest = &spec[ty.name().len()..];
    if let Some(value) = rest.strip_prefix(':') {
        return if ty.is_float() {
            Given::Float { bits }
        } else {
            Given::Int {
                bits,
                negative: value.trim().starts_with('-'),
            }
        };
    }
    let class = if ty.is_float() {
        ElementClass::Float
    } else {
        ElementClass::Int
    };
    Given::Buffer {
        element: Some(Element {
            bits,
            class: Some(class),
        }),
    }
}

/// Parses lower- or upper-case hex digits, two per byte. Errors: an odd number of digits,
/// a character that is not a hex digit.
pub fn parse_hex(hex: &str) -> Result<Vec<u8>, String> {
    let h = hex.trim();
    if h.len() % 2 != 0 {
        return Err(format!("`{h}`: hex bytes need an even number of digits"));
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).map_err(|_| format!("`{h}` is not hex")))
        .collect()
}

/// Lower-case hex of bytes, in memory order.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses `X[,Y[,Z]]`: the values (the others `fill`: 1 for sizes, 0 for an offset) and how
/// many were given. Errors: more than three values, a value that is not a number.
pub fn parse_dims(s: &str, fill: u64) -> Result<([u64; 3], u32), String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("`{s}`: expected X[,Y[,Z]]"));
    }
    let mut out = [fill; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p
            .trim()
            .parse()
            .map_err(|_| format!("`{p}` is not a size"))?;
    }
    Ok((out, parts.len() as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_encode_little_endian_and_check_range() {
        assert_eq!(
            parse_arg("u32:7").unwrap(),
            ArgSpec::Scalar(vec![7, 0, 0, 0])
        );
        assert_eq!(
            parse_arg("i16:-1").unwrap(),
            ArgSpec::Scalar(vec![0xff, 0xff])
        );
        assert_eq!(
            parse_arg("u16:0xABCD").unwrap(),
            ArgSpec::Scalar(vec![0xcd, 0xab])
        );
        assert_eq!(
            parse_arg("f32:1.5").unwrap(),
            ArgSpec::Scalar(1.5f32.to_le_bytes().to_vec())
        );
        assert_eq!(
            parse_arg("f16:1").unwrap(),
            ArgSpec::Scalar(vec![0x00, 0x3c])
        );
        assert_eq!(
            parse_arg("bf16:-2").unwrap(),
            ArgSpec::Scalar(vec![0x00, 0xc0])
        );
        assert_eq!(
            parse_arg("bytes:0a0B").unwrap(),
            ArgSpec::Scalar(vec![0x0a, 0x0b])
        );
        assert!(parse_arg("u8:256").is_err());
        assert!(parse_arg("i8:-129").is_err());
        assert!(parse_arg("u8:0x100").is_err());
        assert!(parse_arg("q32:1").is_err());
        assert!(parse_arg("bytes:abc").is_err());
        // `addr:` passes an address, or any spec, as it is.
        assert_eq!(
            parse_arg("addr:4096").unwrap(),
            ArgSpec::Scalar(4096u64.to_le_bytes().to_vec())
        );
        assert_eq!(
            parse_arg("addr:f32:1").unwrap(),
            parse_arg("f32:1").unwrap()
        );
    }

    #[test]
    fn specs_say_what_they_pass() {
        use pisa_translator::reflect::{Element, ElementClass, Given};
        assert_eq!(
            given_of("u32:7"),
            Given::Int {
                bits: 32,
                negative: false
            }
        );
        assert_eq!(
            given_of("i32:-7"),
            Given::Int {
                bits: 32,
                negative: true
            }
        );
        assert_eq!(given_of("f64:1e3"), Given::Float { bits: 64 });
        assert_eq!(given_of("bytes:00"), Given::Raw);
        assert_eq!(given_of("addr:4096"), Given::Raw);
        let f64s = Some(Element {
            bits: 64,
            class: Some(ElementClass::Float),
        });
        assert_eq!(given_of("f64[]:1,2"), Given::Buffer { element: f64s });
        assert_eq!(given_of("f64[4]"), Given::Buffer { element: f64s });
    }

    #[test]
    fn buffers_parse() {
        assert_eq!(
            parse_arg("i32[]:1,-2").unwrap(),
            ArgSpec::Buffer {
                ty: ElemType::I32,
                bytes: vec![1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]
            }
        );
        assert_eq!(
            parse_arg("u8[3]").unwrap(),
            ArgSpec::Buffer {
                ty: ElemType::U8,
                bytes: vec![0; 3]
            }
        );
        assert!(parse_arg("u8[x]").is_err());
    }

    #[test]
    fn json_floats_round_trip_and_specials_are_strings() {
        assert_eq!(Value::Float(0.1f32 as f64, 32).to_json(), "0.1");
        assert_eq!(Value::Float(f64::NAN, 32).to_json(), "\"nan\"");
        assert_eq!(Value::Float(f64::NEG_INFINITY, 64).to_json(), "\"-inf\"");
        assert_eq!(Value::Signed(-5).to_json(), "-5");
        assert_eq!(
            ElemType::F32.decode(&(-0.0f32).to_le_bytes()).to_json(),
            "-0.0"
        );
    }
}
