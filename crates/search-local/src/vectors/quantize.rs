//! Vectors as 8-bit integers with a scale each, and their dot product.

/// A query vector quantized like the rows.
pub(super) struct Quantized {
    pub(super) data: Vec<i8>,
    pub(super) scale: f32,
}

impl Quantized {
    pub(super) fn new(vector: &[f32]) -> Self {
        let mut data = Vec::with_capacity(vector.len());
        let scale = quantize(vector, &mut data);
        Self { data, scale }
    }
}

/// Appends `vector` as 8-bit integers to `out`; returns what one unit is worth.
pub(crate) fn quantize(vector: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 && max.is_finite() { max / 127.0 } else { 1.0 };
    out.extend(vector.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8));
    scale
}

/// Dot product in sixteen lanes, which the compiler turns into SIMD.
#[inline(always)]
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i32 =
        ca.remainder().iter().zip(cb.remainder()).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            lanes[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    lanes.iter().sum::<i32>() + tail
}
