// The PNG writer and the text metrics, through cairo's image surface and its simple ("toy") text API,
// which finds the font through fontconfig. Same painting order and shapes as the SVG writer.
#include <cairo.h>
#include <fontconfig/fontconfig.h>

#include <cmath>
#include <memory>

#include "cli/errors.hpp"
#include "cli/plot_scene.hpp"

namespace remat::cli::plotting {

namespace {

struct SurfaceDeleter {
    void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
    void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using Surface = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using Context = std::unique_ptr<cairo_t, ContextDeleter>;

void set_font(cairo_t* cr, double size, bool bold) {
    cairo_select_font_face(cr, font_family, CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

void set_colour(cairo_t* cr, Colour c, double opacity = 1) {
    cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, opacity);
}

void check(cairo_status_t status, const char* what) {
    if (status != CAIRO_STATUS_SUCCESS)
        throw Failure(std::string("cannot draw the picture (") + what + "): " + cairo_status_to_string(status));
}

cairo_status_t append(void* closure, const unsigned char* data, unsigned int length) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
}

void paint(cairo_t* cr, const Box& b) {
    cairo_rectangle(cr, b.x, b.y, b.w, b.h);
    if (b.filled) {
        set_colour(cr, b.fill, b.fill_opacity);
        cairo_fill_preserve(cr);
    }
    if (b.stroked) {
        set_colour(cr, b.stroke);
        cairo_set_line_width(cr, b.stroke_width);
        cairo_stroke_preserve(cr);
    }
    cairo_new_path(cr);
}

void paint(cairo_t* cr, const Line& l) {
    if (l.points.empty()) return;
    cairo_move_to(cr, l.points[0].x, l.points[0].y);
    for (std::size_t i = 1; i < l.points.size(); ++i) cairo_line_to(cr, l.points[i].x, l.points[i].y);
    set_colour(cr, l.colour, l.opacity);
    cairo_set_line_width(cr, l.width);
    cairo_stroke(cr);
}

void paint(cairo_t* cr, const Marker& m) {
    cairo_new_sub_path(cr);
    cairo_arc(cr, m.centre.x, m.centre.y, m.radius, 0, 2 * M_PI);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_fill_preserve(cr);
    set_colour(cr, m.colour);
    cairo_set_line_width(cr, m.width);
    cairo_stroke(cr);
}

void paint(cairo_t* cr, const Label& t) {
    set_font(cr, t.size, t.bold);
    set_colour(cr, t.colour);
    cairo_text_extents_t extents;
    cairo_text_extents(cr, t.text.c_str(), &extents);
    const double advance = extents.x_advance;
    const double shift = t.anchor == Anchor::start ? 0 : t.anchor == Anchor::middle ? advance / 2 : advance;
    cairo_save(cr);
    cairo_translate(cr, t.at.x, t.at.y);
    if (t.vertical) cairo_rotate(cr, -M_PI / 2);
    cairo_move_to(cr, -shift, 0);
    cairo_show_text(cr, t.text.c_str());
    cairo_restore(cr);
}

// The 1×1 surface that text is measured on, kept while a layout measures its few dozen labels.
struct Metrics {
    Surface surface{cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1)};
    Context cr{cairo_create(surface.get())};
};
std::unique_ptr<Metrics> metrics;

}  // namespace

CairoScope::~CairoScope() {
    metrics.reset();
    cairo_debug_reset_static_data();
    FcFini();
}

double text_width(const std::string& text, double size, bool bold) {
    if (!metrics) metrics = std::make_unique<Metrics>();
    set_font(metrics->cr.get(), size, bold);
    cairo_text_extents_t extents;
    cairo_text_extents(metrics->cr.get(), text.c_str(), &extents);
    return extents.x_advance;
}

std::string to_png(const Scene& scene) {
    const Surface surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, scene.width, scene.height));
    check(cairo_surface_status(surface.get()), "image surface");
    const Context context(cairo_create(surface.get()));
    cairo_t* cr = context.get();
    check(cairo_status(cr), "context");
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    for (const Shape& shape : scene.shapes) std::visit([cr](const auto& s) { paint(cr, s); }, shape);
    check(cairo_status(cr), "drawing");

    std::string bytes;
    check(cairo_surface_write_to_png_stream(surface.get(), append, &bytes), "PNG encoding");
    return bytes;
}

}  // namespace remat::cli::plotting
