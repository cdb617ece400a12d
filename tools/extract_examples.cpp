// Writes the ```cpp blocks of a Markdown file, in order, as one C++ source: the docs' examples are
// compiled and run as tests, so they cannot rot. Usage: extract_examples DOC.md OUT.cpp
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: extract_examples DOC.md OUT.cpp\n";
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::cerr << "error: cannot read " << argv[1] << "\n";
        return 2;
    }
    std::string out_text = "// Extracted from " + std::string(argv[1]) + "; edit the document, not this file.\n";
    std::string line;
    bool inside = false;
    int blocks = 0, number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (!inside && line.rfind("```cpp", 0) == 0) {
            inside = true;
            ++blocks;
            out_text += "#line " + std::to_string(number + 1) + " \"" + argv[1] + "\"\n";
        } else if (inside && line.rfind("```", 0) == 0) {
            inside = false;
        } else if (inside) {
            out_text += line + "\n";
        }
    }
    if (inside || blocks == 0) {
        std::cerr << "error: " << argv[1] << (inside ? ": unterminated ```cpp block\n" : ": no ```cpp block\n");
        return 2;
    }
    std::ofstream out(argv[2]);
    out << out_text;
    return out ? 0 : 2;
}
