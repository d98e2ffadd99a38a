//! The largest samples of a run with the time each was taken, in a buffer of fixed size.
//!
//! A histogram keeps a latency run's distribution in constant memory but loses time
//! order, and with it any period in the outliers (rteval's documentation says as much).
//! Keeping every sample would grow without bound over a 24-hour run. This keeps the K
//! largest with their times: a min-heap on the value whose root is the smallest kept
//! sample, so a sample below it costs one comparison and one above it O(log K) moves,
//! in memory allocated once before the timed loop.

/// (time since the thread's start, latency), both in ns.
pub type TimedSample = (u64, u64);

/// The `capacity` largest samples offered so far, each with its time.
pub struct LargestSamples {
    /// A binary min-heap on the latency: `heap[0]` is the smallest kept.
    heap: Vec<TimedSample>,
    capacity: usize,
}

impl LargestSamples {
    /// Allocates the whole buffer now, so that `offer` never allocates.
    pub fn new(capacity: usize) -> LargestSamples {
        LargestSamples { heap: Vec::with_capacity(capacity), capacity }
    }

    /// Keep the sample if it is among the largest so far. Cheap enough for a timed loop:
    /// no allocation, no system call; one comparison in the common case.
    #[inline]
    pub fn offer(&mut self, at_ns: u64, latency_ns: u64) {
        if self.heap.len() < self.capacity {
            // Within the capacity reserved in `new`: no reallocation.
            self.heap.push((at_ns, latency_ns));
            self.sift_up(self.heap.len() - 1);
        } else if self.capacity > 0 && latency_ns > self.heap[0].1 {
            self.heap[0] = (at_ns, latency_ns);
            self.sift_down(0);
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].1 <= self.heap[i].1 {
                break;
            }
            self.heap.swap(parent, i);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (left, right) = (2 * i + 1, 2 * i + 2);
            let mut smallest = i;
            if left < n && self.heap[left].1 < self.heap[smallest].1 {
                smallest = left;
            }
            if right < n && self.heap[right].1 < self.heap[smallest].1 {
                smallest = right;
            }
            if smallest == i {
                break;
            }
            self.heap.swap(i, smallest);
            i = smallest;
        }
    }

    /// The kept samples in the order they were taken.
    pub fn into_time_order(self) -> Vec<TimedSample> {
        let mut kept = self.heap;
        kept.sort_unstable();
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_largest_in_time_order_without_growing() {
        let mut kept = LargestSamples::new(5);
        let buffer = kept.heap.as_ptr();
        // A shuffled ramp: value (i * 37) % 100 at time i.
        for i in 0..100u64 {
            kept.offer(i * 1000, (i * 37) % 100);
        }
        assert_eq!(kept.heap.as_ptr(), buffer, "the buffer was never reallocated");
        let got = kept.into_time_order();
        let mut values: Vec<u64> = got.iter().map(|s| s.1).collect();
        assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "time order: {got:?}");
        values.sort_unstable();
        assert_eq!(values, vec![95, 96, 97, 98, 99]);
        // Each kept sample carries its own time.
        assert!(got.iter().all(|&(at, v)| (at / 1000 * 37) % 100 == v));
    }

    #[test]
    fn fewer_samples_than_capacity_are_all_kept_and_capacity_zero_keeps_none() {
        let mut kept = LargestSamples::new(8);
        for (at, v) in [(3, 7), (1, 9), (2, 1)] {
            kept.offer(at, v);
        }
        assert_eq!(kept.into_time_order(), vec![(1, 9), (2, 1), (3, 7)]);
        let mut none = LargestSamples::new(0);
        none.offer(1, 100);
        assert!(none.into_time_order().is_empty());
    }
}
