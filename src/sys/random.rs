//! Random bytes for identities and shuffle seeds (not for secrets).

/// Fill `buf` from the kernel's generator; without one (or if it gives less than asked),
/// from the clock and pid instead: enough to keep run ids and shuffle seeds apart, which
/// is all they are for.
pub fn fill(buf: &mut [u8]) {
    // SAFETY: the buffer is valid for `buf.len()` writable bytes.
    let got = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if got != buf.len() as isize {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let fallback = [(t as u64).to_le_bytes(), u64::from(std::process::id()).to_le_bytes()].concat();
        for (i, x) in buf.iter_mut().enumerate() {
            *x = fallback[i % fallback.len()];
        }
    }
}

/// `N` bytes from [`fill`].
pub fn bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    fill(&mut b);
    b
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_draws_differ() {
        let (a, b) = (super::bytes::<16>(), super::bytes::<16>());
        assert_ne!(a, b);
        let mut empty: [u8; 0] = [];
        super::fill(&mut empty);
    }
}
