//! Drawing numbered boxes onto a screenshot, in Rust, so the page is never touched.
//!
//! Labels are digits only, drawn from a built-in 3×5 bitmap font scaled up, on a
//! filled tab in the box's colour. Each label takes the first free spot among
//! above-left, inside top-left, below-left and above-right of its box, so
//! labels stay legible where boxes crowd.

use image::{ImageFormat, Rgba, RgbaImage};

use crate::marks::Mark;

/// Why a marked screenshot could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DrawError {
    #[error("cannot decode the screenshot: {0}")]
    Decode(#[source] image::ImageError),
    #[error("cannot encode the marked screenshot: {0}")]
    Encode(#[source] image::ImageError),
}

/// High-contrast colours, cycled by mark id.
const PALETTE: [[u8; 3]; 8] = [
    [230, 25, 75],
    [0, 130, 200],
    [60, 180, 75],
    [245, 130, 48],
    [145, 30, 180],
    [0, 128, 128],
    [240, 50, 230],
    [128, 0, 0],
];

/// 3×5 digits, one row per 3 low bits.
const DIGITS: [[u8; 5]; 10] = [
    [0b111, 0b101, 0b101, 0b101, 0b111],
    [0b010, 0b110, 0b010, 0b010, 0b111],
    [0b111, 0b001, 0b111, 0b100, 0b111],
    [0b111, 0b001, 0b111, 0b001, 0b111],
    [0b101, 0b101, 0b111, 0b001, 0b001],
    [0b111, 0b100, 0b111, 0b001, 0b111],
    [0b111, 0b100, 0b111, 0b101, 0b111],
    [0b111, 0b001, 0b001, 0b001, 0b001],
    [0b111, 0b101, 0b111, 0b101, 0b111],
    [0b111, 0b101, 0b111, 0b001, 0b111],
];

const SCALE: i64 = 2;
const PAD: i64 = 2;
const BORDER: i64 = 2;

/// The colour used for a mark id (also what tests look for on the box border).
pub fn mark_color(id: u32) -> [u8; 3] {
    PALETTE[(id as usize).saturating_sub(1) % PALETTE.len()]
}

fn label_size(id: u32) -> (i64, i64) {
    let digits = id.to_string().len() as i64;
    (digits * 4 * SCALE - SCALE + 2 * PAD, 5 * SCALE + 2 * PAD)
}

fn fill(img: &mut RgbaImage, x: i64, y: i64, w: i64, h: i64, c: Rgba<u8>) {
    let (iw, ih) = (img.width() as i64, img.height() as i64);
    for yy in y.max(0)..(y + h).min(ih) {
        for xx in x.max(0)..(x + w).min(iw) {
            img.put_pixel(xx as u32, yy as u32, c);
        }
    }
}

fn overlaps(a: (i64, i64, i64, i64), b: (i64, i64, i64, i64)) -> bool {
    a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
}

/// The box of a mark in image pixels: (left, top, width, height).
pub fn mark_box(m: &Mark) -> (i64, i64, i64, i64) {
    (m.x - m.w / 2, m.y - m.h / 2, m.w.max(1), m.h.max(1))
}

/// Draw a numbered box over each mark on a PNG; returns a new PNG of the same size.
pub fn draw_marks(png: &[u8], marks: &[Mark]) -> Result<Vec<u8>, DrawError> {
    let mut img = image::load_from_memory_with_format(png, ImageFormat::Png).map_err(DrawError::Decode)?.to_rgba8();
    let (iw, ih) = (img.width() as i64, img.height() as i64);
    // Boxes first, then labels on top of every box.
    for m in marks {
        let [r, g, b] = mark_color(m.id);
        let c = Rgba([r, g, b, 255]);
        let (x, y, w, h) = mark_box(m);
        fill(&mut img, x, y, w, BORDER, c);
        fill(&mut img, x, y + h - BORDER, w, BORDER, c);
        fill(&mut img, x, y, BORDER, h, c);
        fill(&mut img, x + w - BORDER, y, BORDER, h, c);
    }
    let mut placed: Vec<(i64, i64, i64, i64)> = Vec::new();
    for m in marks {
        let (bx, by, bw, bh) = mark_box(m);
        let (lw, lh) = label_size(m.id);
        let candidates = [(bx, by - lh), (bx, by), (bx, by + bh), (bx + bw - lw, by - lh), (bx + bw, by)];
        let fits = |&(x, y): &(i64, i64)| x >= 0 && y >= 0 && x + lw <= iw && y + lh <= ih;
        let spot = candidates
            .iter()
            .copied()
            .find(|c| fits(c) && !placed.iter().any(|p| overlaps(*p, (c.0, c.1, lw, lh))))
            .or_else(|| candidates.iter().copied().find(fits))
            .unwrap_or((bx.clamp(0, (iw - lw).max(0)), by.clamp(0, (ih - lh).max(0))));
        placed.push((spot.0, spot.1, lw, lh));
        let [r, g, b] = mark_color(m.id);
        fill(&mut img, spot.0, spot.1, lw, lh, Rgba([r, g, b, 255]));
        let luminance = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64;
        let ink = if luminance > 150.0 { Rgba([0, 0, 0, 255]) } else { Rgba([255, 255, 255, 255]) };
        let mut cx = spot.0 + PAD;
        for ch in m.id.to_string().bytes() {
            let glyph = DIGITS[(ch - b'0') as usize];
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..3 {
                    if bits & (0b100 >> col) != 0 {
                        fill(&mut img, cx + col * SCALE, spot.1 + PAD + row as i64 * SCALE, SCALE, SCALE, ink);
                    }
                }
            }
            cx += 4 * SCALE;
        }
    }
    let mut out = Vec::with_capacity(png.len() + png.len() / 4);
    image::codecs::png::PngEncoder::new_with_quality(
        &mut out,
        image::codecs::png::CompressionType::Fast,
        image::codecs::png::FilterType::Adaptive,
    )
    .write_image(img.as_raw(), img.width(), img.height(), image::ExtendedColorType::Rgba8)
    .map_err(DrawError::Encode)?;
    Ok(out)
}

use image::ImageEncoder;

#[cfg(test)]
mod tests {
    use super::*;

    fn blank_png(w: u32, h: u32) -> Vec<u8> {
        let img = RgbaImage::from_pixel(w, h, Rgba([255, 255, 255, 255]));
        let mut out = Vec::new();
        image::codecs::png::PngEncoder::new(&mut out)
            .write_image(img.as_raw(), w, h, image::ExtendedColorType::Rgba8)
            .unwrap();
        out
    }

    fn mark(id: u32, x: i64, y: i64, w: i64, h: i64) -> Mark {
        Mark {
            id,
            element_index: crate::index::ElementIndex::FIRST,
            tag: "button".into(),
            role: "button".into(),
            name: String::new(),
            x,
            y,
            w,
            h,
        }
    }

    #[test]
    fn draws_a_coloured_box_per_mark_and_keeps_the_size() {
        let png = blank_png(200, 100);
        let marks = [mark(1, 50, 50, 40, 20), mark(12, 150, 60, 30, 30)];
        let out = draw_marks(&png, &marks).unwrap();
        let img = image::load_from_memory(&out).unwrap().to_rgba8();
        assert_eq!((img.width(), img.height()), (200, 100));
        for m in &marks {
            let (x, y, w, h) = mark_box(m);
            let [r, g, b] = mark_color(m.id);
            // Left and bottom borders in the mark's colour.
            assert_eq!(img.get_pixel(x as u32, (y + h / 2) as u32).0, [r, g, b, 255]);
            assert_eq!(img.get_pixel((x + w / 2) as u32, (y + h - 1) as u32).0, [r, g, b, 255]);
        }
        // The centre of a box is untouched.
        assert_eq!(img.get_pixel(50, 52).0, [255, 255, 255, 255]);
    }

    #[test]
    fn crowded_labels_do_not_overlap() {
        let png = blank_png(300, 200);
        let marks: Vec<Mark> = (1..=6).map(|i| mark(i, 100, 100, 60, 20)).collect();
        assert!(draw_marks(&png, &marks).is_ok());
    }
}
