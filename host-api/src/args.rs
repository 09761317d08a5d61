//! Kernel arguments: each one fills one `.param` of the kernel's argument block.
//!
//! A dispatch takes anything [`IntoArgs`]: a tuple of arguments (`(&a, &b, 4u32)`), the
//! [`Args`] builder (`Args::new().arg(&a).arg(4u32)`), or a slice, array or vector of
//! [`Arg`] (raw bytes, `(&a).into()`). One argument is anything [`KernelArg`]: a
//! `&Buffer<T>` (its device address, 8 bytes; the stream keeps the buffer alive until the
//! submission ends; a buffer of another context than the module's is refused,
//! [`Error::ForeignBuffer`], as is an [`Arg`] made from one), an integer or float scalar, an array of them, an [`Arg`]. Arguments are
//! written straight into the argument block as they are checked against the `.param`s
//! (count and sizes), so passing them allocates nothing per argument.
//!
//! [`Signature`] types a kernel: `module.kernel::<(Buffer<f32>, u32)>("scale")?` checks the
//! kernel's `.param` count and sizes once, at that call, and the returned
//! [`Kernel`](crate::Kernel) takes exactly `(&Buffer<f32>, u32)`.
//!
//! ```
//! # fn main() -> pisa_vk::Result<()> {
//! use pisa_vk::{Arg, Args, Context, Error, Module};
//! # let scale_pisa = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/scale.pisa");
//! let ctx = Context::new()?;
//! let m = Module::load(&ctx, scale_pisa)?; // @scale(.param[8] %data, .param[4] %n)
//! let data = ctx.buffer_from(&[1u32, 2, 3])?;
//! m.dispatch("scale", 3, 4, (&data, 3u32))?; // a tuple
//! m.dispatch("scale", 3, 4, Args::new().arg(&data).arg(3u32))?; // the builder
//! m.dispatch("scale", 3, 4, &[Arg::from(&data), Arg::from(3u32)])?; // raw arguments
//! assert_eq!(data.read()?, [27, 54, 81]);
//! // Each argument is checked against its `.param`.
//! let e = m.dispatch("scale", 3, 4, (&data, 3u64)).unwrap_err();
//! assert!(matches!(e, Error::ArgumentSize { index: 1, expected: 4, got: 8, .. }), "{e}");
//! # Ok(()) }
//! ```

use crate::{Buffer, Error, Result};
use bytemuck::Pod;
use pisa_translator::reflect::{Element, ElementClass, Given, ParamInfo};

/// One kernel argument as raw bytes: the bytes of its `.param` and, for one made from a
/// [`Buffer`] (`(&buffer).into()`), the context the buffer belongs to, so that a dispatch
/// refuses a buffer of another context ([`Error::ForeignBuffer`]) as it does for `&Buffer`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    bytes: Vec<u8>,
    context: Option<u64>,
    given: Given,
}

impl Arg {
    /// An argument of raw bytes (the `.param`'s size, little-endian): not known to be a
    /// buffer, so a dispatch cannot keep one alive or check its context, and not checked
    /// against the parameter's kind.
    pub fn bytes(bytes: Vec<u8>) -> Arg {
        Arg {
            bytes,
            context: None,
            given: Given::Raw,
        }
    }

    /// `arg` without its kind: a dispatch takes it whatever the kernel does with its
    /// parameter (an integer where the kernel dereferences an address, a buffer of any
    /// element type), checking only its size (and, for a buffer, its context). The escape
    /// for code that means it (spec-notes §89): `Arg::raw(buffer.device_address())`.
    pub fn raw(arg: impl Into<Arg>) -> Arg {
        Arg {
            given: Given::Raw,
            ..arg.into()
        }
    }

    /// The bytes the `.param` receives.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The id of the context whose buffer's address this is
    /// ([`pisa_runtime::Context::id`]), for an argument made from a [`Buffer`].
    pub fn context(&self) -> Option<u64> {
        self.context
    }
}

impl From<Vec<u8>> for Arg {
    fn from(bytes: Vec<u8>) -> Arg {
        Arg::bytes(bytes)
    }
}

impl<T: Pod> From<&Buffer<T>> for Arg {
    fn from(b: &Buffer<T>) -> Arg {
        Arg {
            bytes: b.device_address().to_le_bytes().to_vec(),
            context: Some(b.raw().context_id()),
            given: Given::Buffer {
                element: element_of::<T>(),
            },
        }
    }
}

macro_rules! scalar_args {
    ($($t:ty => $given:expr),*) => {$(
        impl From<$t> for Arg {
            fn from(x: $t) -> Arg {
                Arg { bytes: x.to_le_bytes().to_vec(), context: None, given: (&x).given() }
            }
        }
        impl KernelArg for $t {
            fn put(&self, sink: &mut ArgSink) { sink.typed(&self.to_le_bytes(), self.given()) }
        }
        impl Param for $t {
            type Value<'x> = $t;
            const SIZE: u32 = std::mem::size_of::<$t>() as u32;
            const NAME: &'static str = stringify!($t);
            fn given() -> Given {
                // A typed kernel's value is not known yet: checked for its sign at dispatch.
                let zero: $t = Default::default();
                zero.given()
            }
        }
        impl Scalar for $t {
            fn given(&self) -> Given {
                let bits = 8 * std::mem::size_of::<$t>() as u32;
                #[allow(clippy::redundant_closure_call, unused_comparisons)]
                ($given)(bits, *self)
            }
        }
    )*};
}

/// What a scalar argument is, for the kind check ([`Given`]).
trait Scalar {
    fn given(&self) -> Given;
}

scalar_args!(
    u8 => |bits, _| Given::Int { bits, negative: false },
    u16 => |bits, _| Given::Int { bits, negative: false },
    u32 => |bits, _| Given::Int { bits, negative: false },
    u64 => |bits, _| Given::Int { bits, negative: false },
    i8 => |bits, x: i8| Given::Int { bits, negative: x < 0 },
    i16 => |bits, x: i16| Given::Int { bits, negative: x < 0 },
    i32 => |bits, x: i32| Given::Int { bits, negative: x < 0 },
    i64 => |bits, x: i64| Given::Int { bits, negative: x < 0 },
    f32 => |bits, _| Given::Float { bits },
    f64 => |bits, _| Given::Float { bits }
);

/// The element of a buffer of `T`, for the kind check: the primitive integer and float
/// types; `None` (taken for any element) for anything else.
fn element_of<T>() -> Option<Element> {
    let (bits, class) = match std::any::type_name::<T>() {
        "u8" | "i8" => (8, ElementClass::Int),
        "u16" | "i16" => (16, ElementClass::Int),
        "u32" | "i32" => (32, ElementClass::Int),
        "u64" | "i64" => (64, ElementClass::Int),
        "f32" => (32, ElementClass::Float),
        "f64" => (64, ElementClass::Float),
        "half::binary16::f16" | "half::bfloat::bf16" => (16, ElementClass::Float),
        _ => return None,
    };
    Some(Element {
        bits,
        class: Some(class),
    })
}

/// Where arguments are written: a kernel's argument block, checked `.param` by `.param`
/// (and, for a buffer, against the module's context). [`KernelArg`] implementations call
/// [`ArgSink::bytes`] or [`ArgSink::buffer`] once per argument. Errors are collected and
/// reported by the dispatch: the count ([`Error::ArgumentCount`]), else the first wrong
/// argument.
pub struct ArgSink<'k> {
    kernel: &'k str,
    params: &'k [ParamInfo],
    /// The id of the module's context, when known (`pisa_runtime::Context::id`).
    context: Option<u64>,
    /// The argument block (the `.param`s at their offsets).
    block: &'k mut [u8],
    next: usize,
    error: Option<Error>,
    leases: Vec<pisa_runtime::BufferLease>,
}

impl<'k> ArgSink<'k> {
    /// The sink of a kernel's arguments, written into `block` (the kernel's `.param` size:
    /// its own buffer, or the slot of the launch block that holds them); `context` is the
    /// id of its module's context (`None`: buffers of every context are taken).
    pub(crate) fn new(
        kernel: &'k str,
        params: &'k [ParamInfo],
        block: &'k mut [u8],
        context: Option<u64>,
    ) -> ArgSink<'k> {
        ArgSink {
            kernel,
            params,
            context,
            block,
            next: 0,
            error: None,
            // Room for the buffers of the arguments and the two a launch adds (the globals
            // arena, a checked launch's check block): the stream keeps this vector.
            leases: Vec::with_capacity(params.len() + 2),
        }
    }

    /// Writes the next argument: `bytes` must be exactly its `.param`'s size (else the
    /// dispatch fails with [`Error::ArgumentSize`]); raw, not checked against the kind.
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.arg(bytes, None, Given::Raw)
    }

    /// Writes the next argument, `bytes`, that is `given` (an integer, a float, ...): like
    /// [`ArgSink::bytes`], and a `given` that contradicts the kernel's use of the parameter
    /// fails the dispatch with [`Error::ArgumentKind`].
    pub fn typed(&mut self, bytes: &[u8], given: Given) {
        self.arg(bytes, None, given)
    }

    /// Writes the address of `buffer` as the next argument and keeps the buffer alive until
    /// the submission has finished; a buffer of another context than the module's fails
    /// the dispatch with [`Error::ForeignBuffer`].
    pub fn buffer(&mut self, buffer: &pisa_runtime::Buffer) {
        self.buffer_of(buffer, None)
    }

    /// [`ArgSink::buffer`] of a buffer whose elements are `element` (`None`: untyped); also
    /// fails the dispatch with [`Error::ArgumentKind`] where the kernel never dereferences
    /// the parameter, or accesses other elements through it.
    pub fn buffer_of(&mut self, buffer: &pisa_runtime::Buffer, element: Option<Element>) {
        self.keep(buffer);
        self.arg(
            &buffer.device_address().to_le_bytes(),
            Some(buffer.context_id()),
            Given::Buffer { element },
        )
    }

    /// Writes the next argument, `bytes`, the address of a buffer of the context `context`
    /// when it is one, checked against the parameter's kind as `given`.
    fn arg(&mut self, bytes: &[u8], context: Option<u64>, given: Given) {
        let index = self.next;
        self.next += 1;
        if self.error.is_some() {
            return;
        }
        let Some(p) = self.params.get(index) else {
            return; // counted at the end
        };
        if bytes.len() != p.size as usize {
            self.error = Some(Error::ArgumentSize {
                kernel: self.kernel.to_string(),
                index,
                param: p.name.clone(),
                expected: p.size,
                got: bytes.len(),
            });
            return;
        }
        if context.is_some_and(|c| self.context.is_some_and(|own| own != c)) {
            self.error = Some(Error::ForeignBuffer {
                kernel: self.kernel.to_string(),
                index,
                param: p.name.clone(),
            });
            return;
        }
        if let Err(e) = check_kind(self.kernel, index, p, given) {
            self.error = Some(e);
            return;
        }
        self.block[p.offset as usize..(p.offset + p.size) as usize].copy_from_slice(bytes);
    }

    /// Keeps `buffer` alive until the submission that runs these arguments has finished.
    pub fn keep(&mut self, buffer: &pisa_runtime::Buffer) {
        self.leases.push(buffer.lease());
    }

    /// The buffers to keep alive, or the error: the count, else the first size.
    pub(crate) fn finish(self) -> Result<Vec<pisa_runtime::BufferLease>> {
        if self.next != self.params.len() {
            return Err(Error::ArgumentCount {
                kernel: self.kernel.to_string(),
                expected: self.params.len(),
                got: self.next,
                params: param_names(self.params),
            });
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.leases),
        }
    }
}

/// `n` zero bytes, allocated with `malloc` and then zeroed: what a dispatch's argument and
/// launch blocks start from. (`vec![0; n]` asks for zeroed memory, `calloc`, which glibc
/// serves without its per-thread cache: slower for the small blocks of every dispatch.)
pub(crate) fn zeroed_bytes(n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, 0);
    v
}

/// One kernel argument (see the [module documentation](self)): scalars, arrays of them,
/// `&Buffer<T>`, [`Arg`]. Implement it to pass a type of your own (a `#[repr(C)]` struct
/// as one `.param`).
pub trait KernelArg {
    /// Writes the argument with one [`ArgSink::bytes`] (or [`ArgSink::buffer`]) call.
    fn put(&self, sink: &mut ArgSink);
}

impl<T: KernelArg + ?Sized> KernelArg for &T {
    fn put(&self, sink: &mut ArgSink) {
        (**self).put(sink)
    }
}

impl<T: Pod> KernelArg for Buffer<T> {
    fn put(&self, sink: &mut ArgSink) {
        sink.buffer_of(self.raw(), element_of::<T>())
    }
}

impl KernelArg for Arg {
    fn put(&self, sink: &mut ArgSink) {
        sink.arg(&self.bytes, self.context, self.given)
    }
}

impl<T: Pod, const N: usize> KernelArg for [T; N] {
    fn put(&self, sink: &mut ArgSink) {
        sink.bytes(bytemuck::cast_slice(self))
    }
}

/// The arguments of a dispatch (see the [module documentation](self)): a tuple of up to 12
/// [`KernelArg`]s, `()`, an [`Args`] builder, or a slice, array or vector of [`Arg`].
pub trait IntoArgs {
    /// Writes every argument into `sink`, in order.
    fn put_all(self, sink: &mut ArgSink);
}

impl IntoArgs for &[Arg] {
    fn put_all(self, sink: &mut ArgSink) {
        self.iter().for_each(|a| a.put(sink))
    }
}

impl IntoArgs for &Vec<Arg> {
    fn put_all(self, sink: &mut ArgSink) {
        self.as_slice().put_all(sink)
    }
}

impl IntoArgs for Vec<Arg> {
    fn put_all(self, sink: &mut ArgSink) {
        self.as_slice().put_all(sink)
    }
}

impl<const N: usize> IntoArgs for &[Arg; N] {
    fn put_all(self, sink: &mut ArgSink) {
        self.as_slice().put_all(sink)
    }
}

impl<const N: usize> IntoArgs for [Arg; N] {
    fn put_all(self, sink: &mut ArgSink) {
        self.as_slice().put_all(sink)
    }
}

impl IntoArgs for () {
    fn put_all(self, _: &mut ArgSink) {}
}

macro_rules! tuple_args {
    ($(($($t:ident $i:tt),+))*) => {$(
        impl<$($t: KernelArg),+> IntoArgs for ($($t,)+) {
            fn put_all(self, sink: &mut ArgSink) {
                $(self.$i.put(sink);)+
            }
        }
        impl<$($t: Param),+> Signature for ($($t,)+) {
            type Args<'x> = ($($t::Value<'x>,)+);
            fn params() -> Vec<(u32, &'static str, Given)> {
                vec![$(($t::SIZE, $t::NAME, $t::given())),+]
            }
        }
    )*};
}
tuple_args! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

/// A builder of arguments, for a count or mix a tuple does not fit:
/// `Args::new().arg(&a).arg(4u32)`. Each [`Args::arg`] takes anything [`KernelArg`] and
/// boxes it (one heap allocation per argument; a tuple allocates nothing).
#[derive(Default)]
pub struct Args<'a> {
    args: Vec<Box<dyn KernelArg + 'a>>,
}

impl<'a> Args<'a> {
    /// No arguments yet.
    pub fn new() -> Args<'a> {
        Args::default()
    }

    /// Appends `arg`.
    pub fn arg(mut self, arg: impl KernelArg + 'a) -> Args<'a> {
        self.args.push(Box::new(arg));
        self
    }

    /// Appends `arg` in place (for loops).
    pub fn push(&mut self, arg: impl KernelArg + 'a) -> &mut Args<'a> {
        self.args.push(Box::new(arg));
        self
    }
}

impl IntoArgs for Args<'_> {
    fn put_all(self, sink: &mut ArgSink) {
        self.args.iter().for_each(|a| a.put(sink))
    }
}

impl IntoArgs for &Args<'_> {
    fn put_all(self, sink: &mut ArgSink) {
        self.args.iter().for_each(|a| a.put(sink))
    }
}

/// A parameter type of a typed kernel ([`Signature`]): a scalar (`u8` ... `f64`, its size),
/// or a [`Buffer`] (a pointer parameter, `.param[8]`).
pub trait Param {
    /// What a dispatch passes for it (`u32`, `&Buffer<f32>`).
    type Value<'x>: KernelArg;
    /// The `.param` size it fills.
    const SIZE: u32;
    /// How errors name it.
    const NAME: &'static str;
    /// What it is, for the kind check ([`Given`]; raw: not checked).
    fn given() -> Given {
        Given::Raw
    }
}

impl<T: Pod> Param for Buffer<T> {
    type Value<'x> = &'x Buffer<T>;
    const SIZE: u32 = 8;
    const NAME: &'static str = "&Buffer (a pointer)";
    fn given() -> Given {
        Given::Buffer {
            element: element_of::<T>(),
        }
    }
}

/// The parameter types of a kernel, a tuple of up to 12 [`Param`]s (or `()`):
/// `(Buffer<f32>, Buffer<f32>, u32)`. See [`Module::kernel`](crate::Module::kernel).
pub trait Signature {
    /// The arguments a dispatch passes: `(&Buffer<f32>, &Buffer<f32>, u32)`.
    type Args<'x>: IntoArgs;
    /// Size, name and kind ([`Param::given`]) of each parameter.
    fn params() -> Vec<(u32, &'static str, Given)>;
}

impl Signature for () {
    type Args<'x> = ();
    fn params() -> Vec<(u32, &'static str, Given)> {
        Vec::new()
    }
}

/// The names of `params`, in order (for [`Error::ArgumentCount`]).
fn param_names(params: &[ParamInfo]) -> Vec<String> {
    params.iter().map(|p| p.name.clone()).collect()
}

/// Checks `S` against the kernel's `.param`s: their count ([`Error::ArgumentCount`]),
/// sizes ([`Error::Launch`], naming the type given) and kinds ([`Error::ArgumentKind`]: a
/// `Buffer<f64>` where the kernel accesses 32-bit floats, a `u32` where it dereferences an
/// address).
pub(crate) fn check_signature<S: Signature>(kernel: &str, params: &[ParamInfo]) -> Result<()> {
    let sig = S::params();
    if sig.len() != params.len() {
        return Err(Error::ArgumentCount {
            kernel: kernel.to_string(),
            expected: params.len(),
            got: sig.len(),
            params: param_names(params),
        });
    }
    for (index, ((size, name, given), p)) in sig.iter().zip(params).enumerate() {
        if *size != p.size {
            return Err(Error::Launch {
                kernel: kernel.to_string(),
                message: format!(
                    "the signature's parameter {index} is {name} ({size} bytes), but `%{}` is \
                     `.param[{}]`",
                    p.name, p.size
                ),
            });
        }
        check_kind(kernel, index, p, *given)?;
    }
    Ok(())
}

/// [`Error::ArgumentKind`] when `given` for argument `index` of `kernel` clearly contradicts
/// how the kernel uses the parameter `p` (what every launch path checks: the CLI, Python) ([`pisa_translator::reflect::ParamKind::refusal`]).
pub fn check_kind(kernel: &str, index: usize, p: &ParamInfo, given: Given) -> Result<()> {
    let Some(why) = p.kind.refusal(given) else {
        return Ok(());
    };
    Err(Error::ArgumentKind {
        kernel: kernel.to_string(),
        index,
        param: p.name.clone(),
        given: given.to_string(),
        why: why.to_string(),
        kind: p.kind.to_string(),
        at: p
            .kind_at
            .as_ref()
            .map(|l| format!("{}:{}:{}: `{}`", l.file, l.line, l.col, l.text)),
    })
}

/// Lays out `args` in a kernel's argument block of `size` bytes (`params` and `size` from
/// its [`KernelInfo`](pisa_translator::reflect::KernelInfo)), checking their count and
/// sizes against the `.param`s (not their buffers' contexts: no module is known here).
/// Host memory only. Errors: [`Error::ArgumentCount`], [`Error::ArgumentSize`].
pub fn pack_args(kernel: &str, params: &[ParamInfo], size: u32, args: &[Arg]) -> Result<Vec<u8>> {
    let mut block = zeroed_bytes(size as usize);
    let mut sink = ArgSink::new(kernel, params, &mut block, None);
    args.put_all(&mut sink);
    sink.finish()?;
    Ok(block)
}
