//! Launch sizes: [`Dim3`] (work-items in up to three dimensions), [`IntoDim3`] (what a
//! dispatch accepts: any integer, tuples and arrays of them) and [`Launch`].

use crate::{Error, Result};

/// Work-item counts in up to three dimensions; what is not given is 1. Made from any
/// unsigned integer, a pair or triple of them, or an array of one to three (`From`); a
/// dispatch takes anything [`IntoDim3`], signed integers included.
///
/// ```
/// use pisa_vk::{Dim3, IntoDim3};
/// assert_eq!(Dim3::from(64u32), Dim3 { size: [64, 1, 1], dims: 1 });
/// assert_eq!(Dim3::from((16usize, 8usize)).size, [16, 8, 1]);
/// assert_eq!([4u64, 4, 2].into_dim3(), Ok(Dim3 { size: [4, 4, 2], dims: 3 }));
/// assert_eq!((8, -3).into_dim3().unwrap_err(), "size -3 in dimension y is negative");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// Sizes per dimension.
    pub size: [u64; 3],
    /// How many dimensions were given (`%workdim`).
    pub dims: u32,
}

impl Dim3 {
    /// The first `sizes.len()` (1 to 3) dimensions from `sizes`, the others 1.
    fn from_slice(sizes: &[u64]) -> Dim3 {
        let mut size = [1u64; 3];
        size[..sizes.len()].copy_from_slice(sizes);
        Dim3 {
            size,
            dims: sizes.len() as u32,
        }
    }
}

/// An integer type a size may be given in. A negative value is an error when the launch is
/// made ([`IntoDim3`]).
pub trait DimInt: Copy {
    /// The value as a size, or the value itself when it is negative.
    fn to_size(self) -> std::result::Result<u64, i128>;
}

macro_rules! dim_ints {
    (unsigned: $($u:ty),*; signed: $($s:ty),*) => {
        $(impl DimInt for $u {
            fn to_size(self) -> std::result::Result<u64, i128> { Ok(self as u64) }
        })*
        $(impl DimInt for $s {
            fn to_size(self) -> std::result::Result<u64, i128> {
                u64::try_from(self).map_err(|_| self as i128)
            }
        })*
        // Unsigned sizes convert without a possible error.
        $(impl From<$u> for Dim3 {
            fn from(x: $u) -> Dim3 { Dim3::from_slice(&[x as u64]) }
        }
        impl From<($u, $u)> for Dim3 {
            fn from((x, y): ($u, $u)) -> Dim3 { Dim3::from_slice(&[x as u64, y as u64]) }
        }
        impl From<($u, $u, $u)> for Dim3 {
            fn from((x, y, z): ($u, $u, $u)) -> Dim3 {
                Dim3::from_slice(&[x as u64, y as u64, z as u64])
            }
        }
        impl<const N: usize> From<[$u; N]> for Dim3 where [(); N]: Dims {
            fn from(a: [$u; N]) -> Dim3 { Dim3::from_slice(&a.map(|v| v as u64)) }
        })*
    };
}
dim_ints!(unsigned: u8, u16, u32, u64, usize; signed: i8, i16, i32, i64, isize);

/// The array lengths a size may have: 1, 2 or 3.
pub trait Dims {}
impl Dims for [(); 1] {}
impl Dims for [(); 2] {}
impl Dims for [(); 3] {}

/// What a dispatch accepts as a size: an integer of any type (`64`, `64u32`, `n as usize`),
/// a tuple of two or three (`(64, 8)`), an array of one to three (`[64, 8, 2]`), or a
/// [`Dim3`]. A negative value is an [`Error::Launch`] naming the dimension.
pub trait IntoDim3 {
    /// The size, or the message of a negative value.
    fn into_dim3(self) -> std::result::Result<Dim3, String>;
}

impl IntoDim3 for Dim3 {
    fn into_dim3(self) -> std::result::Result<Dim3, String> {
        Ok(self)
    }
}

fn sizes(values: &[std::result::Result<u64, i128>]) -> std::result::Result<Dim3, String> {
    let mut out = [1u64; 3];
    for (d, v) in values.iter().enumerate() {
        out[d] =
            v.map_err(|v| format!("size {v} in dimension {} is negative", ['x', 'y', 'z'][d]))?;
    }
    Ok(Dim3::from_slice(&out[..values.len()]))
}

macro_rules! into_dim3_ints {
    ($($t:ty),*) => {$(
        impl IntoDim3 for $t {
            fn into_dim3(self) -> std::result::Result<Dim3, String> { sizes(&[self.to_size()]) }
        }
    )*};
}
into_dim3_ints!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl<A: DimInt, B: DimInt> IntoDim3 for (A, B) {
    fn into_dim3(self) -> std::result::Result<Dim3, String> {
        sizes(&[self.0.to_size(), self.1.to_size()])
    }
}

impl<A: DimInt, B: DimInt, C: DimInt> IntoDim3 for (A, B, C) {
    fn into_dim3(self) -> std::result::Result<Dim3, String> {
        sizes(&[self.0.to_size(), self.1.to_size(), self.2.to_size()])
    }
}

impl<T: DimInt, const N: usize> IntoDim3 for [T; N]
where
    [(); N]: Dims,
{
    fn into_dim3(self) -> std::result::Result<Dim3, String> {
        sizes(&self.map(DimInt::to_size))
    }
}

/// `size` as a [`Dim3`], or the [`Error::Launch`] of `kernel`.
pub(crate) fn dim3(size: impl IntoDim3, kernel: &str, what: &str) -> Result<Dim3> {
    size.into_dim3().map_err(|m| Error::Launch {
        kernel: kernel.to_string(),
        message: format!("{what}: {m}"),
    })
}

/// A whole launch: the NDRange in work-items, its work-group size and its global offset
/// (what [`Module::dispatch_launch`](crate::Module::dispatch_launch) and
/// [`Stream::launch`](crate::Stream::launch) take; [`Module::dispatch`](crate::Module::dispatch)
/// is a launch without offset). Sizes are checked when it is dispatched, not here.
///
/// A kernel that writes `%globaloffset.x + i` for its work-item `i` sees the offset:
///
/// ```
/// # fn main() -> pisa_vk::Result<()> {
/// use pisa_vk::{Context, Launch, Module};
/// const IDS: &str = ".version 0.1;\n.target 100;\n
/// .kernel @ids(.param[8] %out) {
///   .reg .64b %p, %off, %id, %base;
///   .reg .32b %g, %s, %l, %i;
///   ld.param.64b %p, [%out];
///   mov.32b %g, %groupid.x;
///   mov.32b %s, %enqueuedlocalsize.x;
///   mov.32b %l, %localid.x;
///   umad.32b %i, %g, %s, %l;
///   mov.64b %base, %globaloffset.x;
///   umul.full.32b %id, %i, 1;
///   iadd.64b %id, %id, %base;
///   umul.full.32b %off, %i, 8;
///   iadd.64b %p, %p, %off;
///   st.global.64b [%p], %id;
/// }";
/// let ctx = Context::new()?;
/// let m = Module::from_source(&ctx, "ids.pisa", IDS)?;
/// let out = ctx.zeroed::<u64>(4)?;
/// let launch = Launch::new(4u32, 2u32).with_offset([10, 0, 0]);
/// assert_eq!(launch.work_dim(), 1);
/// m.dispatch_launch("ids", &launch, (&out,))?;
/// assert_eq!(out.read()?, [10, 11, 12, 13]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Global size (work-items per dimension); need not be a multiple of `local`.
    pub global: Dim3,
    /// Work-group size.
    pub local: Dim3,
    /// Global offset (`%globaloffset`).
    pub offset: [u64; 3],
}

impl Launch {
    /// `%workdim`: the dimensions given for the global or the local size, at least 1 (what
    /// the device gets and what the reference interpreter gets through
    /// `pisa_vk::reference`).
    pub fn work_dim(&self) -> u32 {
        self.global.dims.max(self.local.dims).clamp(1, 3)
    }

    /// `global` work-items in work-groups of `local`, without a global offset. Nothing is
    /// checked here: a zero or oversized size is an [`Error::Launch`] of the dispatch.
    pub fn new(global: impl Into<Dim3>, local: impl Into<Dim3>) -> Launch {
        Launch {
            global: global.into(),
            local: local.into(),
            offset: [0; 3],
        }
    }

    /// The launch with global offset `offset`: what `%globaloffset` reads. The group and
    /// local ids do not include it: a kernel that wants offset positions adds it.
    pub fn with_offset(mut self, offset: [u64; 3]) -> Launch {
        self.offset = offset;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_of_every_integer_type_tuple_and_array() {
        let d = |s: [u64; 3], dims| Ok(Dim3 { size: s, dims });
        assert_eq!(64.into_dim3(), d([64, 1, 1], 1));
        assert_eq!(64u8.into_dim3(), d([64, 1, 1], 1));
        assert_eq!((64usize, 8i64).into_dim3(), d([64, 8, 1], 2));
        assert_eq!((4, 3, 2).into_dim3(), d([4, 3, 2], 3));
        assert_eq!([7u16].into_dim3(), d([7, 1, 1], 1));
        assert_eq!([7, 6, 5].into_dim3(), d([7, 6, 5], 3));
        assert_eq!(u64::MAX.into_dim3(), d([u64::MAX, 1, 1], 1));
        assert_eq!(
            (8, -3).into_dim3().unwrap_err(),
            "size -3 in dimension y is negative"
        );
        assert_eq!(
            i64::MIN.into_dim3().unwrap_err(),
            "size -9223372036854775808 in dimension x is negative"
        );
        assert_eq!(Dim3::from(5u32), Dim3::from([5u64]));
        assert_eq!(Dim3::from((2u16, 3u16)).dims, 2);
    }
}
