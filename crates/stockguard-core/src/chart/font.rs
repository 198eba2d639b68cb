//! The font plotters draws text with. The PNG back end rasterises glyphs itself, so a font
//! is embedded rather than looked up on the machine (a headless CI box may have none).
//! DejaVu Sans Mono, under its own permissive licence (`assets/fonts/LICENSE-DejaVu.txt`).

use std::sync::Once;

use plotters::style::FontStyle;

static FONT: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSansMono.ttf");

/// Registers the font as `sans-serif` (plotters' default family) once per process.
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for style in [FontStyle::Normal, FontStyle::Bold] {
            plotters::style::register_font("sans-serif", style, FONT)
                .unwrap_or_else(|_| panic!("the embedded DejaVu font is a valid TrueType font"));
        }
    });
}
