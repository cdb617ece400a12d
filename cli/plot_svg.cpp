// The SVG writer: one element per shape, coordinates to 0.01 px, text escaped for XML 1.0.
#include <cstdio>

#include "cli/plot_scene.hpp"

namespace remat::cli::plotting {

namespace {

std::string number(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f", v);
    std::string s = buffer;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s == "-0" ? "0" : s;
}

std::string colour(Colour c) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", c.r, c.g, c.b);
    return buffer;
}

std::string escaped(const std::string& text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default:
                // XML 1.0 has no control characters but tab and newline (a file name may hold any).
                if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
        }
    }
    return out;
}

std::string kind_attribute(const std::string& kind) {
    return kind.empty() ? "" : " class=\"" + escaped(kind) + "\"";
}

std::string svg_of(const Box& b) {
    std::string out = "<rect x=\"" + number(b.x) + "\" y=\"" + number(b.y) + "\" width=\"" + number(b.w) +
                      "\" height=\"" + number(b.h) + "\" fill=\"" + (b.filled ? colour(b.fill) : "none") + "\"";
    if (b.filled && b.fill_opacity < 1) out += " fill-opacity=\"" + number(b.fill_opacity) + "\"";
    if (b.stroked) out += " stroke=\"" + colour(b.stroke) + "\" stroke-width=\"" + number(b.stroke_width) + "\"";
    return out + "/>\n";
}

std::string svg_of(const Line& l) {
    std::string out = "<polyline" + kind_attribute(l.kind) + " fill=\"none\" stroke=\"" + colour(l.colour) +
                      "\" stroke-width=\"" + number(l.width) + "\" stroke-linejoin=\"round\"";
    if (l.opacity < 1) out += " stroke-opacity=\"" + number(l.opacity) + "\"";
    out += " points=\"";
    for (std::size_t i = 0; i < l.points.size(); ++i) {
        if (i > 0) out += ' ';
        out += number(l.points[i].x);
        out += ',';
        out += number(l.points[i].y);
    }
    return out + "\"/>\n";
}

std::string svg_of(const Marker& m) {
    return "<circle" + kind_attribute(m.kind) + " cx=\"" + number(m.centre.x) + "\" cy=\"" + number(m.centre.y) +
           "\" r=\"" + number(m.radius) + "\" fill=\"#ffffff\" stroke=\"" + colour(m.colour) + "\" stroke-width=\"" +
           number(m.width) + "\"/>\n";
}

std::string svg_of(const Label& t) {
    static constexpr const char* anchors[] = {"start", "middle", "end"};
    std::string out = "<text x=\"" + number(t.at.x) + "\" y=\"" + number(t.at.y) + "\" font-size=\"" + number(t.size) +
                      "\" text-anchor=\"" + anchors[static_cast<int>(t.anchor)] + "\" fill=\"" + colour(t.colour) + "\"";
    if (t.bold) out += " font-weight=\"bold\"";
    if (t.vertical) out += " transform=\"rotate(-90 " + number(t.at.x) + " " + number(t.at.y) + ")\"";
    return out + ">" + escaped(t.text) + "</text>\n";
}

}  // namespace

std::string to_svg(const Scene& scene) {
    const std::string w = std::to_string(scene.width), h = std::to_string(scene.height);
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " +
           h + "\" font-family=\"" + font_family + ", Verdana, sans-serif\">\n";
    out += "<rect width=\"" + w + "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n";
    for (const Shape& shape : scene.shapes) out += std::visit([](const auto& s) { return svg_of(s); }, shape);
    out += "</svg>\n";
    return out;
}

}  // namespace remat::cli::plotting
