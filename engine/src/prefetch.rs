//! A hint to bring memory into the cache ahead of its use, without waiting for it.
//!
//! Reading a line would bring it too, but a read is not done until its data arrives: once a
//! few dozen instructions wait behind reads that missed, the core stops issuing, so a batch's
//! misses overlap only a few at a time. A prefetch is done as soon as it is issued, so every
//! line of a batch is on its way at once and the work that follows runs while they arrive.
//! The hint never faults and changes nothing a program can observe; on targets without one
//! it does nothing.

/// Hints that every line of `value` will be read soon.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    let first = std::ptr::from_ref(value).cast::<u8>();
    line(first);
    // A value that does not start a line may end in the next one.
    line(first.wrapping_add(std::mem::size_of::<T>().saturating_sub(1)));
}

/// Hints that the line holding `byte` will be read soon.
#[inline(always)]
pub(crate) fn line(byte: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 reads no data architecturally and never faults, whatever the address;
    // SSE, which has it, is part of every x86-64 CPU.
    #[allow(unsafe_code)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(byte.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = byte;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_never_faults_and_changes_nothing() {
        // Addresses no load may touch: a hint to them is dropped.
        line(std::ptr::null());
        line(usize::MAX as *const u8);
        let values = [7u64; 9];
        prefetch(&values);
        assert_eq!(values, [7; 9], "a hint changed what it pointed at");
    }
}
