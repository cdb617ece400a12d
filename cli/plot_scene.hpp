#pragma once
// A picture as a flat list of shapes in pixel coordinates (y down), laid out once by `remat plot`
// (cli/plot.cpp) and written by two writers: SVG as text of our own (plot_svg.cpp: real <text>,
// <polyline> and <circle> elements a reader or a test can search) and PNG through cairo (plot_png.cpp),
// which also measures text for the layout.
#include <string>
#include <variant>
#include <vector>

namespace remat::cli::plotting {

struct Colour {
    unsigned char r = 0, g = 0, b = 0;
};

struct Point {
    double x = 0, y = 0;
};

// `kind` names what a shape shows ("train", "train-raw", "valid"); the SVG writer makes it the element's class.
struct Line {
    std::vector<Point> points;
    Colour colour;
    double width = 1, opacity = 1;
    std::string kind;
};

struct Marker {  // a circle: outline in colour, filled white
    Point centre;
    double radius = 3, width = 1.5;
    Colour colour;
    std::string kind;
};

struct Box {
    double x = 0, y = 0, w = 0, h = 0;
    Colour fill, stroke;
    bool filled = true, stroked = false;
    double fill_opacity = 1, stroke_width = 1;
};

enum class Anchor { start, middle, end };

// The baseline starts, is centred or ends at (x, y); `vertical` turns it 90° anticlockwise about (x, y).
struct Label {
    Point at;
    std::string text;  // UTF-8
    double size = 12;
    Anchor anchor = Anchor::start;
    bool vertical = false, bold = false;
    Colour colour;
};

using Shape = std::variant<Box, Line, Marker, Label>;

// Painted in order, later shapes over earlier ones, on a white background.
struct Scene {
    int width = 0, height = 0;
    std::vector<Shape> shapes;
};

// The one font both writers name; the PNG writer gets it from fontconfig (Debian's fonts-dejavu-core).
inline constexpr const char* font_family = "DejaVu Sans";

// While alive, text_width and to_png may be used; at its end cairo's and fontconfig's caches are freed
// (a leak checker reports them otherwise), so no cairo object may outlive it. One per run of the command.
struct CairoScope {
    CairoScope() = default;
    CairoScope(const CairoScope&) = delete;
    CairoScope& operator=(const CairoScope&) = delete;
    ~CairoScope();
};

// The advance width in pixels of text in the font at the size (cairo's metrics).
double text_width(const std::string& text, double size, bool bold = false);

std::string to_svg(const Scene& scene);
// The PNG file's bytes. Throws Failure when cairo fails.
std::string to_png(const Scene& scene);

}  // namespace remat::cli::plotting
