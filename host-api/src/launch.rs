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
//!
//! A plan holds its (at most 8) regions only: its dispatches are made one at a time by
//! [`Plan::parts`] as they are recorded, so planning costs the same for every grid (the
//! largest legal one, 2^32 - 1 work-items per dimension in work-groups of 1, has about
//! 2.8 * 10^14 dispatches at a limit of 65535 groups).

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

/// A launch as dispatches: its regions of one local size each, split into parts lazily.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// `%groupcount` of the launch.
    pub group_count: [u32; 3],
    /// The regions, full work-groups first; only the first `regions_len` are used.
    regions: [Part; 8],
    regions_len: usize,
    /// The most work-groups of one dispatch per dimension (each at least 1).
    max: [u32; 3],
}

impl Plan {
    /// The dispatches, full work-groups first, made one at a time.
    pub fn parts(&self) -> Parts {
        Parts {
            regions: self.regions,
            regions_len: self.regions_len,
            max: self.max,
            region: 0,
            at: [0; 3],
        }
    }

    /// The number of dispatches [`Plan::parts`] makes (up to 2^96 with a limit of 1 group).
    pub fn len(&self) -> u128 {
        self.regions()
            .iter()
            .map(|r| chunk_count(r, self.max))
            .sum()
    }

    /// The one dispatch of a launch that is one (no edge, no dimension split).
    pub fn single(&self) -> Option<Part> {
        match self.regions() {
            [one] if chunk_count(one, self.max) == 1 => Some(*one),
            _ => None,
        }
    }

    /// Its regions: one per combination of full and edge sizes (at most 8), each with the
    /// local size, first group and group count of the whole region.
    pub fn regions(&self) -> &[Part] {
        &self.regions[..self.regions_len]
    }
}

/// The number of dispatches of at most `max` groups per dimension that cover `region`.
fn chunk_count(region: &Part, max: [u32; 3]) -> u128 {
    (0..3)
        .map(|d| region.groups[d].div_ceil(max[d]) as u128)
        .product()
}

/// The dispatches of a [`Plan`], made as they are asked for: each region in turn, split
/// into chunks of at most the device's group counts, x fastest. It owns a copy of the plan's
/// regions (a few hundred bytes), so it can outlive the plan.
#[derive(Clone, Debug)]
pub(crate) struct Parts {
    regions: [Part; 8],
    regions_len: usize,
    max: [u32; 3],
    /// The region being split.
    region: usize,
    /// The first group, relative to the region, of the next chunk.
    at: [u32; 3],
}

impl Iterator for Parts {
    type Item = Part;

    fn next(&mut self) -> Option<Part> {
        let region = *self.regions[..self.regions_len].get(self.region)?;
        let mut part = region;
        for d in 0..3 {
            part.group_base[d] = region.group_base[d] + self.at[d];
            part.groups[d] = (region.groups[d] - self.at[d]).min(self.max[d]);
        }
        self.advance(&region);
        Some(part)
    }
}

impl Parts {
    /// Moves to the next chunk of `region` (x fastest), or to the next region's first.
    fn advance(&mut self, region: &Part) {
        for d in 0..3 {
            // Both below 2^32: the sum does not overflow in 64 bits.
            let next = self.at[d] as u64 + self.max[d] as u64;
            if next < region.groups[d] as u64 {
                self.at[d] = next as u32;
                return;
            }
            self.at[d] = 0;
        }
        self.region += 1;
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
        if full > 0 {
            runs[d][count[d]] = (local[d], 0, full);
            count[d] += 1;
        }
        if edge > 0 {
            runs[d][count[d]] = (edge, full, 1);
            count[d] += 1;
        }
    }
    let empty = Part {
        local,
        group_base: [0; 3],
        groups: [0; 3],
    };
    let mut regions = [empty; 8];
    let mut regions_len = 0;
    for &(lx, bx, nx) in &runs[0][..count[0]] {
        for &(ly, by, ny) in &runs[1][..count[1]] {
            for &(lz, bz, nz) in &runs[2][..count[2]] {
                regions[regions_len] = Part {
                    local: [lx, ly, lz],
                    group_base: [bx, by, bz],
                    groups: [nx, ny, nz],
                };
                regions_len += 1;
            }
        }
    }
    Ok(Plan {
        group_count,
        regions,
        regions_len,
        max: max_groups.map(|m| m.max(1)),
    })
}

/// The per-dimension work-group limits of the parts of a launch of a cancellable kernel
/// (spec-notes §108): within `max`, parts of at most `budget` work-groups in all (at least
/// one), so that a cancel stops the launch within one batch of the runtime
/// ([`pisa_runtime::CANCELLABLE_BATCH_GROUPS`]). x is given as many as the launch has (up to
/// the budget), then y of what is left, then z.
pub(crate) fn cancellable_limits(
    global: [u64; 3],
    local: [u32; 3],
    max: [u32; 3],
    budget: u64,
) -> [u32; 3] {
    let mut left = budget.max(1);
    let mut limits = [1u32; 3];
    for d in 0..3 {
        let groups = global[d].div_ceil(local[d].max(1) as u64).max(1);
        let n = groups.min(left).min(max[d].max(1) as u64);
        limits[d] = n as u32;
        left = (left / n).max(1);
    }
    limits
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: [u32; 3] = [65535; 3];

    #[test]
    fn cancellable_parts_have_at_most_the_budget_of_work_groups() {
        let budget = 1 << 16;
        // 2^23 groups in x: parts of 65535 (the device limit is below the budget).
        let l = cancellable_limits([1 << 23, 1, 1], [1, 1, 1], LIMIT, budget);
        assert_eq!(l, [65535, 1, 1]);
        // 2^12 x 2^11 groups, one dispatch on the device: rows of 4096 groups, 16 at a time.
        let l = cancellable_limits([1 << 18, 1 << 11, 1], [64, 1, 1], LIMIT, budget);
        assert_eq!(l, [4096, 16, 1]);
        // 16 groups in x leave the rest of the budget to y and z.
        let l = cancellable_limits([16, 1 << 20, 1 << 20], [1, 1, 1], LIMIT, budget);
        assert_eq!(l, [16, 4096, 1]);
        // A small launch keeps its shape.
        let l = cancellable_limits([100, 3, 2], [10, 1, 1], LIMIT, budget);
        assert_eq!(l, [10, 3, 2]);
        // Every plan with these limits covers its grid in parts within the budget.
        for (global, local) in [
            ([1u64 << 23, 1, 1], [1u32, 1, 1]),
            ([(1 << 18) + 5, 1 << 11, 1], [64, 1, 1]),
            ([16, 1 << 20, 3], [1, 1, 1]),
        ] {
            let l = cancellable_limits(global, local, LIMIT, budget);
            let p = plan(global, local, l).unwrap();
            check_cover(global, local, &p);
            for part in p.parts().take(10_000) {
                let n: u64 = part.groups.iter().map(|&g| g as u64).product();
                assert!(n <= budget, "{part:?}");
            }
        }
    }

    /// Every work-item of the plan, as (global id, local size) per dimension, checked to
    /// cover the NDRange exactly once with the local sizes of its work-groups.
    fn check_cover(global: [u64; 3], local: [u32; 3], plan: &Plan) {
        let mut items = 0u64;
        let mut parts = 0u128;
        for p in plan.parts() {
            parts += 1;
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
        assert_eq!(parts, plan.len());
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
            p.parts().collect::<Vec<_>>(),
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
            p.parts().collect::<Vec<_>>(),
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
        assert_eq!(p.len(), 8);
        assert_eq!(p.group_count, [3, 3, 3]);
        check_cover(g, l, &p);
        // Fewer work-items than one work-group: only the edge.
        let p = plan([5, 1, 1], [64, 1, 1], LIMIT).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p.parts().next().unwrap().local, [5, 1, 1]);
    }

    #[test]
    fn launches_beyond_the_group_count_limit_are_split() {
        let (g, l) = ([16_777_216, 1, 1], [256, 1, 1]);
        let p = plan(g, l, LIMIT).unwrap();
        assert_eq!(p.group_count, [65536, 1, 1]);
        assert_eq!(p.len(), 2);
        assert_eq!(p.parts().nth(1).unwrap().group_base, [65535, 0, 0]);
        assert_eq!(p.parts().nth(1).unwrap().groups, [1, 1, 1]);
        check_cover(g, l, &p);
        // 2^31 - 1 groups of one work-item in x.
        let big = (1u64 << 31) - 1;
        let p = plan([big, 1, 1], [1, 1, 1], LIMIT).unwrap();
        assert_eq!(p.group_count[0] as u64, big);
        assert_eq!(p.len() as u64, big.div_ceil(65535));
        check_cover([big, 1, 1], [1, 1, 1], &p);
        // 2-D above the limit in y, with edges in both dimensions.
        let (g, l) = ([100, 70_000 * 2 + 1, 1], [16, 2, 1]);
        let p = plan(g, l, LIMIT).unwrap();
        assert_eq!(p.group_count, [7, 70_001, 1]);
        check_cover(g, l, &p);
        // A small limit splits every dimension.
        let p = plan([9, 9, 9], [1, 1, 1], [4, 4, 4]).unwrap();
        assert_eq!(p.len(), 27);
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

    #[test]
    fn the_largest_grid_is_planned_without_making_its_parts() {
        let max = u32::MAX as u64;
        let p = plan([max; 3], [1; 3], LIMIT).unwrap();
        assert_eq!(p.group_count, [u32::MAX; 3]);
        assert_eq!(p.single(), None);
        // 2^32 - 1 = 65535 * 65537: 65537 chunks of exactly 65535 groups per dimension.
        assert_eq!(p.len(), 65537u128 * 65537 * 65537);
        let mut parts = p.parts();
        let full = |base: [u32; 3]| Part {
            local: [1; 3],
            group_base: base,
            groups: [65535; 3],
        };
        assert_eq!(parts.next(), Some(full([0, 0, 0])));
        assert_eq!(parts.next(), Some(full([65535, 0, 0])));
        // x is fastest: the 65538th part starts the second row in y.
        assert_eq!(parts.nth(65535), Some(full([0, 65535, 0])));
        // The iterator is a copy of the regions and a cursor, whatever the grid.
        assert!(std::mem::size_of::<Parts>() <= 400);
        // The last part of a grid of 3 * 65535 + 1 groups in x is the lone group at the end.
        let p = plan([3 * 65535 + 1, 1, 1], [1; 3], LIMIT).unwrap();
        assert_eq!(p.len(), 4);
        let last = p.parts().last().unwrap();
        assert_eq!(
            (last.group_base, last.groups),
            ([3 * 65535, 0, 0], [1, 1, 1])
        );
    }

    #[test]
    fn only_an_exact_launch_within_the_limits_is_single() {
        let p = plan([1024, 4, 1], [256, 2, 1], LIMIT).unwrap();
        let one = Part {
            local: [256, 2, 1],
            group_base: [0; 3],
            groups: [4, 2, 1],
        };
        assert_eq!(p.single(), Some(one));
        assert_eq!(
            plan([1000, 1, 1], [256, 1, 1], LIMIT).unwrap().single(),
            None
        );
        assert_eq!(
            plan([65536, 1, 1], [1, 1, 1], LIMIT).unwrap().single(),
            None
        );
    }
}
