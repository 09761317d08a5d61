//! Kernel arguments: each one fills one `.param` of the kernel's argument block.
//!
//! A dispatch takes anything [`IntoArgs`]: a tuple of arguments (`(&a, &b, 4u32)`), the
//! [`Args`] builder (`Args::new().arg(&a).arg(4u32)`), or a slice, array or vector of
//! [`Arg`] (raw bytes, `(&a).into()`). One argument is anything [`KernelArg`]: a
//! `&Buffer<T>` (its device address, 8 bytes; the stream keeps the buffer alive until the
//! submission ends), an integer or float scalar, an array of them, an [`Arg`]. Arguments are
//! written straight into the argument block as they are checked against the `.param`s
//! (count and sizes), so passing them allocates nothing per argument.
//!
//! [`Signature`] types a kernel: `module.kernel::<(Buffer<f32>, u32)>("scale")?` checks the
//! kernel's `.param` count and sizes once, at that call, and the returned
//! [`Kernel`](crate::Kernel) takes exactly `(&Buffer<f32>, u32)`.

use crate::{Buffer, Error, Result};
use bytemuck::Pod;
use pisa_translator::reflect::ParamInfo;

/// One kernel argument as raw bytes: the bytes of its `.param`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg(pub Vec<u8>);

impl<T: Pod> From<&Buffer<T>> for Arg {
    fn from(b: &Buffer<T>) -> Arg {
        Arg(b.device_address().to_le_bytes().to_vec())
    }
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(x: $t) -> Arg { Arg(x.to_le_bytes().to_vec()) }
        }
        impl KernelArg for $t {
            fn put(&self, sink: &mut ArgSink) { sink.bytes(&self.to_le_bytes()) }
        }
        impl Param for $t {
            type Value<'x> = $t;
            const SIZE: u32 = std::mem::size_of::<$t>() as u32;
            const NAME: &'static str = stringify!($t);
        }
    )*};
}
scalar_args!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// Where arguments are written: a kernel's argument block, checked `.param` by `.param`.
/// [`KernelArg`] implementations call [`ArgSink::bytes`] once per argument.
pub struct ArgSink<'k> {
    kernel: &'k str,
    params: &'k [ParamInfo],
    block: Vec<u8>,
    next: usize,
    error: Option<Error>,
    leases: Vec<pisa_runtime::BufferLease>,
}

impl<'k> ArgSink<'k> {
    pub(crate) fn new(kernel: &'k str, params: &'k [ParamInfo], size: u32) -> ArgSink<'k> {
        ArgSink {
            kernel,
            params,
            block: vec![0; size as usize],
            next: 0,
            error: None,
            leases: Vec::new(),
        }
    }

    /// Writes the next argument: `bytes` must be exactly its `.param`'s size (else the
    /// dispatch fails with [`Error::ArgumentSize`]).
    pub fn bytes(&mut self, bytes: &[u8]) {
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
        self.block[p.offset as usize..(p.offset + p.size) as usize].copy_from_slice(bytes);
    }

    /// Keeps `buffer` alive until the submission that runs these arguments has finished.
    pub fn keep(&mut self, buffer: &pisa_runtime::Buffer) {
        self.leases.push(buffer.lease());
    }

    /// The argument block and the buffers to keep alive, or the error: the count, else the
    /// first size.
    pub(crate) fn finish(self) -> Result<(Vec<u8>, Vec<pisa_runtime::BufferLease>)> {
        if self.next != self.params.len() {
            return Err(Error::ArgumentCount {
                kernel: self.kernel.to_string(),
                expected: self.params.len(),
                got: self.next,
            });
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok((self.block, self.leases)),
        }
    }
}

/// One kernel argument (see the [module documentation](self)).
pub trait KernelArg {
    /// Writes the argument with one [`ArgSink::bytes`] call.
    fn put(&self, sink: &mut ArgSink);
}

impl<T: KernelArg + ?Sized> KernelArg for &T {
    fn put(&self, sink: &mut ArgSink) {
        (**self).put(sink)
    }
}

impl<T: Pod> KernelArg for Buffer<T> {
    fn put(&self, sink: &mut ArgSink) {
        sink.keep(self.raw());
        sink.bytes(&self.device_address().to_le_bytes())
    }
}

impl KernelArg for Arg {
    fn put(&self, sink: &mut ArgSink) {
        sink.bytes(&self.0)
    }
}

impl<T: Pod, const N: usize> KernelArg for [T; N] {
    fn put(&self, sink: &mut ArgSink) {
        sink.bytes(bytemuck::cast_slice(self))
    }
}

/// The arguments of a dispatch (see the [module documentation](self)).
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
            fn params() -> Vec<(u32, &'static str)> {
                vec![$(($t::SIZE, $t::NAME)),+]
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
/// `Args::new().arg(&a).arg(4u32)`. Each [`Args::arg`] takes anything [`KernelArg`].
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

/// A parameter type of a typed kernel ([`Signature`]): a scalar, or a [`Buffer`] (a pointer
/// parameter, `.param[8]`).
pub trait Param {
    /// What a dispatch passes for it (`u32`, `&Buffer<f32>`).
    type Value<'x>: KernelArg;
    /// The `.param` size it fills.
    const SIZE: u32;
    /// How errors name it.
    const NAME: &'static str;
}

impl<T: Pod> Param for Buffer<T> {
    type Value<'x> = &'x Buffer<T>;
    const SIZE: u32 = 8;
    const NAME: &'static str = "&Buffer (a pointer)";
}

/// The parameter types of a kernel, a tuple of [`Param`]s: `(Buffer<f32>, Buffer<f32>, u32)`.
pub trait Signature {
    /// The arguments a dispatch passes: `(&Buffer<f32>, &Buffer<f32>, u32)`.
    type Args<'x>: IntoArgs;
    /// Size and name of each parameter.
    fn params() -> Vec<(u32, &'static str)>;
}

impl Signature for () {
    type Args<'x> = ();
    fn params() -> Vec<(u32, &'static str)> {
        Vec::new()
    }
}

/// Checks `S` against the kernel's `.param`s: their count ([`Error::ArgumentCount`]) and
/// sizes ([`Error::ArgumentSize`], naming the type given).
pub(crate) fn check_signature<S: Signature>(kernel: &str, params: &[ParamInfo]) -> Result<()> {
    let sig = S::params();
    if sig.len() != params.len() {
        return Err(Error::ArgumentCount {
            kernel: kernel.to_string(),
            expected: params.len(),
            got: sig.len(),
        });
    }
    for (index, ((size, name), p)) in sig.iter().zip(params).enumerate() {
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
    }
    Ok(())
}

/// Lays out `args` in a kernel's argument block, checking their count and sizes against
/// the `.param`s.
pub fn pack_args(kernel: &str, params: &[ParamInfo], size: u32, args: &[Arg]) -> Result<Vec<u8>> {
    let mut sink = ArgSink::new(kernel, params, size);
    args.put_all(&mut sink);
    sink.finish().map(|(block, _)| block)
}
