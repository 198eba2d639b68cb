//! The font plotters draws text with. The PNG back end rasterises glyphs itself (no system
//! font fallback), so a font missing a glyph draws nothing where the text should be.
//!
//! WenQuanYi Micro Hei (Apache-2.0, `assets/fonts/LICENSE-WenQuanYi-Micro-Hei.txt`): Latin
//! and CJK in one face, so a chart exported from the window in Chinese keeps its Chinese
//! labels, and mixed labels (`Redis 偏高`) draw whole. Embedded (5 MB in the binary) rather
//! than loaded from a system path: the path differs between distributions, a headless CI box
//! or a bare server running the CLI may have no CJK font at all, and a missing one would not
//! fail but silently export unreadable charts. Embedding makes every export the same everywhere
//! and needs no package dependency.

use std::sync::Once;

use plotters::style::FontStyle;

/// A TrueType collection; plotters reads its first face, the proportional Micro Hei.
static FONT: &[u8] = include_bytes!("../../../../assets/fonts/wqy-microhei.ttc");

/// Registers the font as `sans-serif` (plotters' default family) once per process. The SVG
/// back end only names the family: the window draws SVG text with the system's fonts.
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for style in [FontStyle::Normal, FontStyle::Bold] {
            plotters::style::register_font("sans-serif", style, FONT)
                .unwrap_or_else(|_| panic!("the embedded WenQuanYi font is a valid TrueType collection"));
        }
    });
}
