//! Test-only: the Internet checksum's one's-complement sum done the plain way,
//! independent of the code under test (each 16-bit big-endian word added to a 32-bit
//! register, the carry folded back in at once, an odd last octet padded with zero).

/// The folded one's-complement sum of `data` (not complemented).
pub fn plain_sum(data: &[u8]) -> u16 {
    let mut r: u32 = 0;
    for w in data.chunks(2) {
        r += (u32::from(w[0]) << 8) | u32::from(w.get(1).copied().unwrap_or(0));
        if r > 0xffff {
            r -= 0xffff;
        }
    }
    r as u16
}

/// The sum over the IPv4 pseudo-header (`src`, `dst`, protocol, `length`) followed by
/// `segment`, laid out in one buffer.
pub fn plain_pseudo_sum(src: [u8; 4], dst: [u8; 4], protocol: u8, length: u16, segment: &[u8]) -> u16 {
    let mut all = Vec::with_capacity(12 + segment.len());
    all.extend_from_slice(&src);
    all.extend_from_slice(&dst);
    all.extend_from_slice(&[0, protocol]);
    all.extend_from_slice(&length.to_be_bytes());
    all.extend_from_slice(segment);
    plain_sum(&all)
}
