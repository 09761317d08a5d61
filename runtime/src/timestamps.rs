//! GPU time of recorded work: a pair of timestamp queries written around commands of a
//! command buffer, read back in nanoseconds once the submission has finished.
//!
//! [`TimestampSupport`] is what the device says about timestamps on the queue family the
//! runtime uses (`timestampValidBits`, `timestampPeriod`); the crate-internal `QueryTimer`
//! owns one query pool of two queries. Anything that records commands (today the
//! executor's launches, later a stream of launches) brackets them with its `record_start`
//! and `record_end` and reads `elapsed` after the fence.

use std::time::Duration;

use ash::vk;

use crate::error::{Error, VkResultExt};

/// Timestamp support of one queue family of a device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimestampSupport {
    /// `timestampValidBits` of the queue family: 0 = no timestamps, else 36..=64.
    pub valid_bits: u32,
    /// `timestampPeriod`: nanoseconds per timestamp tick.
    pub period_ns: f32,
}

impl TimestampSupport {
    /// The mask of the valid bits of a timestamp (all ones for 64).
    fn mask(&self) -> u64 {
        if self.valid_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.valid_bits) - 1
        }
    }

    /// The time between two raw timestamps `start` and `end` (taken in that order; a
    /// counter that wrapped within its valid bits once is accounted for).
    pub fn between(&self, start: u64, end: u64) -> Duration {
        let mask = self.mask();
        let ticks = (end & mask).wrapping_sub(start & mask) & mask;
        let ns = ticks as f64 * self.period_ns as f64;
        Duration::from_nanos(ns.round().min(u64::MAX as f64) as u64)
    }

    /// An error unless timestamps can be taken: `timestampValidBits` is 0 or
    /// `timestampPeriod` is not a positive number.
    pub fn check(&self) -> Result<(), Error> {
        if self.valid_bits == 0 {
            return Err(Error::MissingFeatures {
                what: "a timed dispatch".into(),
                features: vec!["timestampValidBits > 0 (timestamps on the compute queue)"],
            });
        }
        if !(self.period_ns.is_finite() && self.period_ns > 0.0) {
            return Err(Error::MissingFeatures {
                what: "a timed dispatch".into(),
                features: vec!["timestampPeriod > 0"],
            });
        }
        Ok(())
    }
}

/// Two timestamp queries (start, end) in a query pool of their own.
pub(crate) struct QueryTimer {
    pool: vk::QueryPool,
    support: TimestampSupport,
}

impl QueryTimer {
    /// A query pool of two timestamp queries; fails when the queue has no timestamps.
    pub fn new(device: &ash::Device, support: TimestampSupport) -> Result<QueryTimer, Error> {
        support.check()?;
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(2);
        // SAFETY: valid device and create info.
        let pool = unsafe { device.create_query_pool(&info, None) }.vk("vkCreateQueryPool")?;
        Ok(QueryTimer { pool, support })
    }

    /// Records the reset of both queries and the start timestamp, before the timed commands.
    ///
    /// # Safety
    /// `cmd` is a command buffer of `device` in the recording state, outside a render pass.
    pub unsafe fn record_start(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        device.cmd_reset_query_pool(cmd, self.pool, 0, 2);
        device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, self.pool, 0);
    }

    /// Records the end timestamp, written once every command recorded before it has
    /// finished.
    ///
    /// # Safety
    /// As for [`QueryTimer::record_start`], which must have been recorded earlier in `cmd`.
    pub unsafe fn record_end(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, self.pool, 1);
    }

    /// The time between the two timestamps. Call only after the submission that wrote them
    /// has finished (its fence signalled): then the results are available without waiting.
    pub fn elapsed(&self, device: &ash::Device) -> Result<Duration, Error> {
        let mut stamps = [0u64; 2];
        // SAFETY: the pool has two queries; both were written by a finished submission.
        unsafe {
            device.get_query_pool_results(
                self.pool,
                0,
                &mut stamps,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .vk("vkGetQueryPoolResults")?;
        Ok(self.support.between(stamps[0], stamps[1]))
    }

    /// Destroys the query pool.
    ///
    /// # Safety
    /// No pending submission uses the queries.
    pub unsafe fn destroy(&self, device: &ash::Device) {
        device.destroy_query_pool(self.pool, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_become_nanoseconds_within_the_valid_bits() {
        let s = TimestampSupport {
            valid_bits: 64,
            period_ns: 1.0,
        };
        assert_eq!(s.between(100, 1100), Duration::from_nanos(1000));
        let s = TimestampSupport {
            valid_bits: 36,
            period_ns: 52.083,
        };
        // A counter that wrapped at 2^36 between the two reads.
        let start = (1u64 << 36) - 10;
        assert_eq!(s.between(start, 10), Duration::from_nanos(1042));
        // Bits above the valid ones are ignored.
        assert_eq!(
            s.between(0xF << 60, (0xF << 60) | 1),
            Duration::from_nanos(52)
        );
    }

    #[test]
    fn no_timestamps_is_an_error_naming_the_property() {
        let none = TimestampSupport {
            valid_bits: 0,
            period_ns: 1.0,
        };
        match none.check() {
            Err(Error::MissingFeatures { features, .. }) => {
                assert!(features[0].contains("timestampValidBits"))
            }
            other => panic!("{other:?}"),
        }
        let bad_period = TimestampSupport {
            valid_bits: 64,
            period_ns: 0.0,
        };
        assert!(bad_period.check().is_err());
    }
}
