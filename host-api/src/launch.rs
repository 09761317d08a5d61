//! Launch geometry: how an NDRange of any size becomes Vulkan dispatches.
//!
//! A launch of `global` work-items in work-groups of `local` has, per dimension,
//! `global / local` full work-groups and, when `local` does not divide `global`, one partial
//! edge work-group of `global % local` work-items. Each combination of full and edge parts
//! over the three dimensions (at most 8 regions) is dispatched with a pipeline specialized to
//! that region's local size, so no invocation outside the NDRange exists: `%localsize` is
//! the edge size by construction, and barriers in a partial work-group are executed by every
//! invocation of it. A region with more groups than `maxComputeWorkGroupCount` allows in a
//! dimension is split into chunks. Every dispatch carries its first group's id (the group
//! base of the launch block), so `%groupid`, `%groupcount` and the global ids kernels compute
//! from them are those of the whole launch.

/// One dispatch of a planned launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    /// The local size of its pipeline (the enqueued one, or an edge size).
    pub local: [u32; 3],
    /// The `%groupid` of its first work-group.
    pub group_base: [u32; 3],
    /// Its work-group counts.
    pub groups: [u32; 3],
}

/// A launch as dispatches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// `%groupcount` of the launch.
    pub group_count: [u32; 3],
    parts: Parts,
}

/// The dispatches of a plan: one (a launch whose grid is a multiple of its work-group
/// size, within the device's group counts: kept without a vector) or several.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Parts {
    One(Part),
    Many(Vec<Part>),
}

impl Plan {
    /// The dispatches, full work-groups first.
    pub fn parts(&self) -> &[Part] {
        match &self.parts {
            Parts::One(part) => std::slice::from_ref(part),
            Parts::Many(parts) => parts,
        }
    }
}

const DIM: [char; 3] = ['x', 'y', 'z'];

/// The bytes of a launch block (a kernel's push constants) that live on the stack: 256, the
/// `maxPushConstantsSize` of most devices (Vulkan guarantees 128).
const STACK_BLOCK: usize = 256;

/// A zeroed launch block being filled for one launch: on the stack when it fits in
/// [`STACK_BLOCK`] bytes, else on the heap (the runtime copies it when the launch is
/// recorded, so it need not outlive that).
pub(crate) struct LaunchBlock {
    stack: [u8; STACK_BLOCK],
    heap: Vec<u8>,
    len: usize,
}

impl LaunchBlock {
    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> LaunchBlock {
        LaunchBlock {
            stack: [0; STACK_BLOCK],
            heap: match len > STACK_BLOCK {
                true => crate::args::zeroed_bytes(len),
                false => Vec::new(),
            },
            len,
        }
    }

    /// The bytes.
    pub fn bytes(&mut self) -> &mut [u8] {
        match self.len > STACK_BLOCK {
            true => &mut self.heap,
            false => &mut self.stack[..self.len],
        }
    }
}

/// Plans a launch of `global` work-items in work-groups of `local` (every dimension at least
/// 1) on a device allowing `max_groups` work-groups per dispatch. An error names what is
/// wrong: an empty dimension (CUDA refuses a zero-sized grid too), or more than 2^32 - 1
/// work-groups in a dimension (`%groupid` and `%groupcount` are 32-bit).
pub(crate) fn plan(
    global: [u64; 3],
    local: [u32; 3],
    max_groups: [u32; 3],
) -> Result<Plan, String> {
    let mut group_count = [0u32; 3];
    // Per dimension: the (local size, first group, group count) of its full and edge runs
    // (at most one of each), the first `count[d]` of `runs[d]`.
    let mut runs = [[(0u32, 0u32, 0u32); 2]; 3];
    let mut count = [0usize; 3];
    // Whether the launch is one dispatch: no edge, no dimension split.
    let mut one = true;
    for d in 0..3 {
        if global[d] == 0 {
            return Err(format!("grid size 0 in dimension {}", DIM[d]));
        }
        let l = local[d] as u64;
        let groups = global[d].div_ceil(l);
        group_count[d] = u32::try_from(groups).map_err(|_| {
            format!(
                "{groups} work-groups in dimension {} (grid {} / block {}): at most {} \
                 (%groupid is 32-bit)",
                DIM[d],
                global[d],
                l,
                u32::MAX
            )
        })?;
        let full = (global[d] / l) as u32;
        let edge = (global[d] % l) as u32;
        one &= edge == 0 && full <= max_groups[d];
        if full > 0 {
            runs[d][count[d]] = (local[d], 0, full);
            count[d] += 1;
        }
        if edge > 0 {
            runs[d][count[d]] = (edge, full, 1);
            count[d] += 1;
        }
    }
    if one {
        let part = Part {
            local,
            group_base: [0; 3],
            groups: group_count,
        };
        return Ok(Plan {
            group_count,
            parts: Parts::One(part),
        });
    }
    let mut parts = Vec::with_capacity(count.iter().product());
    for &(lx, bx, nx) in &runs[0][..count[0]] {
        for &(ly, by, ny) in &runs[1][..count[1]] {
            for &(lz, bz, nz) in &runs[2][..count[2]] {
                chunks(
                    [lx, ly, lz],
                    [bx, by, bz],
                    [nx, ny, nz],
                    max_groups,
                    &mut parts,
                );
            }
        }
    }
    Ok(Plan {
        group_count,
        parts: Parts::Many(parts),
    })
}

/// Splits the region of `groups` work-groups from `base` into dispatches of at most
/// `max_groups` per dimension.
fn chunks(
    local: [u32; 3],
    base: [u32; 3],
    groups: [u32; 3],
    max_groups: [u32; 3],
    out: &mut Vec<Part>,
) {
    let max = max_groups.map(|m| m.max(1));
    let starts = |d: usize| (0..groups[d]).step_by(max[d] as usize);
    for z in starts(2) {
        for y in starts(1) {
            for x in starts(0) {
                let at = [x, y, z];
                let mut part = Part {
                    local,
                    group_base: [0; 3],
                    groups: [0; 3],
                };
                for d in 0..3 {
                    part.group_base[d] = base[d] + at[d];
                    part.groups[d] = (groups[d] - at[d]).min(max[d]);
                }
                out.push(part);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: [u32; 3] = [65535; 3];

    /// Every work-item of the plan, as (global id, local size) per dimension, checked to
    /// cover the NDRange exactly once with the local sizes of its work-groups.
    fn check_cover(global: [u64; 3], local: [u32; 3], plan: &Plan) {
        let mut items = 0u64;
        for p in plan.parts() {
            for d in 0..3 {
                assert!(p.groups[d] >= 1 && p.groups[d] <= LIMIT[d], "{p:?}");
                let first = p.group_base[d] as u64 * local[d] as u64;
                let last = (p.group_base[d] as u64 + p.groups[d] as u64 - 1) * local[d] as u64
                    + p.local[d] as u64;
                assert!(last <= global[d], "{p:?} leaves the NDRange in {d}");
                assert!(first < global[d]);
                // An edge part is one group at the end, of the remaining size.
                if p.local[d] != local[d] {
                    assert_eq!(p.groups[d], 1);
                    assert_eq!(last, global[d]);
                }
            }
            items += (0..3)
                .map(|d| p.groups[d] as u64 * p.local[d] as u64)
                .product::<u64>();
        }
        assert_eq!(items, global.iter().product::<u64>());
        for d in 0..3 {
            assert_eq!(
                plan.group_count[d] as u64,
                global[d].div_ceil(local[d] as u64)
            );
        }
    }

    #[test]
    fn an_exact_launch_is_one_dispatch() {
        let p = plan([1024, 4, 1], [256, 2, 1], LIMIT).unwrap();
        assert_eq!(
            p.parts(),
            vec![Part {
                local: [256, 2, 1],
                group_base: [0; 3],
                groups: [4, 2, 1]
            }]
        );
        assert_eq!(p.group_count, [4, 2, 1]);
    }

    #[test]
    fn partial_work_groups_are_dispatched_with_their_own_size() {
        let p = plan([1000, 1, 1], [256, 1, 1], LIMIT).unwrap();
        assert_eq!(
            p.parts(),
            vec![
                Part {
                    local: [256, 1, 1],
                    group_base: [0; 3],
                    groups: [3, 1, 1]
                },
                Part {
                    local: [232, 1, 1],
                    group_base: [3, 0, 0],
                    groups: [1, 1, 1]
                },
            ]
        );
        // 3-D with an edge in every dimension: 8 regions.
        let (g, l) = ([10, 7, 5], [4, 3, 2]);
        let p = plan(g, l, LIMIT).unwrap();
        assert_eq!(p.parts().len(), 8);
        assert_eq!(p.group_count, [3, 3, 3]);
        check_cover(g, l, &p);
        // Fewer work-items than one work-group: only the edge.
        let p = plan([5, 1, 1], [64, 1, 1], LIMIT).unwrap();
        assert_eq!(p.parts().len(), 1);
        assert_eq!(p.parts()[0].local, [5, 1, 1]);
    }

    #[test]
    fn launches_beyond_the_group_count_limit_are_split() {
        let (g, l) = ([16_777_216, 1, 1], [256, 1, 1]);
        let p = plan(g, l, LIMIT).unwrap();
        assert_eq!(p.group_count, [65536, 1, 1]);
        assert_eq!(p.parts().len(), 2);
        assert_eq!(p.parts()[1].group_base, [65535, 0, 0]);
        assert_eq!(p.parts()[1].groups, [1, 1, 1]);
        check_cover(g, l, &p);
        // 2^31 - 1 groups of one work-item in x.
        let big = (1u64 << 31) - 1;
        let p = plan([big, 1, 1], [1, 1, 1], LIMIT).unwrap();
        assert_eq!(p.group_count[0] as u64, big);
        assert_eq!(p.parts().len() as u64, big.div_ceil(65535));
        check_cover([big, 1, 1], [1, 1, 1], &p);
        // 2-D above the limit in y, with edges in both dimensions.
        let (g, l) = ([100, 70_000 * 2 + 1, 1], [16, 2, 1]);
        let p = plan(g, l, LIMIT).unwrap();
        assert_eq!(p.group_count, [7, 70_001, 1]);
        check_cover(g, l, &p);
        // A small limit splits every dimension.
        let p = plan([9, 9, 9], [1, 1, 1], [4, 4, 4]).unwrap();
        assert_eq!(p.parts().len(), 27);
    }

    #[test]
    fn empty_grids_and_too_many_groups_are_errors() {
        assert_eq!(
            plan([0, 1, 1], [1, 1, 1], LIMIT).unwrap_err(),
            "grid size 0 in dimension x"
        );
        assert_eq!(
            plan([4, 4, 0], [1, 1, 1], LIMIT).unwrap_err(),
            "grid size 0 in dimension z"
        );
        let e = plan([1 << 32, 1, 1], [1, 1, 1], LIMIT).unwrap_err();
        assert!(e.contains("4294967296 work-groups in dimension x"), "{e}");
        plan([u32::MAX as u64, 1, 1], [1, 1, 1], [u32::MAX; 3]).unwrap();
    }
}
