#include "parser.hpp"

#include <charconv>
#include <cstdlib>

#include "lexer.hpp"
#include "template_error.hpp"

namespace remat::text::jinja {

namespace {

constexpr int max_nesting = 256;  // statements and expressions nested deeper are refused, not recursed into

class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

    Program run() {
        Program p;
        p.body = body({});
        if (peek().kind != Token::Kind::end) fail_at(peek(), "unexpected '" + peek().text + "'");
        return p;
    }

private:
    [[noreturn]] static void fail_at(const Token& t, const std::string& why) {
        throw TemplateError("line " + std::to_string(t.line) + ", column " + std::to_string(t.column) + ": " + why);
    }
    const Token& peek(std::size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
    const Token& next() { return t_[i_ < t_.size() - 1 ? i_++ : i_]; }
    bool is_op(const char* op, std::size_t ahead = 0) const { return peek(ahead).kind == Token::Kind::op && peek(ahead).text == op; }
    bool is_name(const char* name, std::size_t ahead = 0) const {
        return peek(ahead).kind == Token::Kind::name && peek(ahead).text == name;
    }
    void expect_op(const char* op) {
        if (!is_op(op)) fail_at(peek(), std::string("expected '") + op + "', got " + shown(peek()));
        next();
    }
    std::string expect_name() {
        if (peek().kind != Token::Kind::name) fail_at(peek(), "expected a name, got " + shown(peek()));
        return next().text;
    }
    void expect_block_end() {
        if (peek().kind != Token::Kind::block_end) fail_at(peek(), "expected the end of the tag ('%}'), got " + shown(peek()));
        next();
    }
    static std::string shown(const Token& t) {
        switch (t.kind) {
            case Token::Kind::end: return "the end of the template";
            case Token::Kind::block_end: return "'%}'";
            case Token::Kind::variable_end: return "'}}'";
            case Token::Kind::data: return "text";
            case Token::Kind::string: return "a string";
            default: return "'" + t.text + "'";
        }
    }

    struct Depth {
        Depth(int& d, const Token& at) : d_(d) {
            if (++d_ > max_nesting) fail_at(at, "nested more than " + std::to_string(max_nesting) + " levels deep");
        }
        ~Depth() { --d_; }
        int& d_;
    };

    // Statements until a block tag whose keyword is one of `ends` (left unread, at its name).
    Body body(std::initializer_list<const char*> ends) {
        const Depth depth(depth_, peek());
        Body out;
        for (;;) {
            const Token& t = peek();
            if (t.kind == Token::Kind::end) {
                if (ends.size() == 0) return out;
                fail_at(t, std::string("the template ended inside a block: expected '{% ") + *(ends.end() - 1) + " %}'");
            }
            if (t.kind == Token::Kind::data) {
                Node n;
                n.kind = Node::Kind::text;
                n.text = next().text;
                out.push_back(std::move(n));
            } else if (t.kind == Token::Kind::variable_begin) {
                next();
                Node n = at(t, Node::Kind::output);
                n.expr = expression();
                if (peek().kind != Token::Kind::variable_end) fail_at(peek(), "expected '}}', got " + shown(peek()));
                next();
                out.push_back(std::move(n));
            } else if (t.kind == Token::Kind::block_begin) {
                const Token& keyword = peek(1);
                for (const char* end : ends)
                    if (keyword.kind == Token::Kind::name && keyword.text == end) {
                        next();
                        return out;
                    }
                next();
                out.push_back(statement());
            } else {
                fail_at(t, "unexpected " + shown(t));
            }
        }
    }

    static Node at(const Token& t, Node::Kind kind) {
        Node n;
        n.kind = kind;
        n.line = t.line;
        n.column = t.column;
        return n;
    }

    // After '{%', at the keyword.
    Node statement() {
        const Token& t = peek();
        if (t.kind != Token::Kind::name) fail_at(t, "expected a statement, got " + shown(t));
        const std::string keyword = next().text;
        if (keyword == "if") return if_chain(t);
        if (keyword == "for") return for_loop(t);
        if (keyword == "set") return set(t);
        if (keyword == "macro") return macro(t);
        if (keyword == "break" || keyword == "continue") {
            expect_block_end();
            if (loops_ == 0) fail_at(t, "'" + keyword + "' outside a for loop");
            return at(t, keyword == "break" ? Node::Kind::loop_break : Node::Kind::loop_continue);
        }
        if (keyword == "generation") {
            expect_block_end();
            Node n = at(t, Node::Kind::block);
            n.body = body({"endgeneration"});
            close("endgeneration");
            return n;
        }
        if (keyword.starts_with("end") || keyword == "else" || keyword == "elif")
            fail_at(t, "'" + keyword + "' here does not close an open block");
        fail_at(t, "the statement '" + keyword + "' is not supported in chat templates");
    }

    void close(const char* keyword) {
        const Token& t = next();  // the keyword
        if (t.text != keyword) fail_at(t, std::string("expected '") + keyword + "'");
        expect_block_end();
    }

    Node if_chain(const Token& t) {
        Node n = at(t, Node::Kind::if_chain);
        ExprPtr condition = expression();
        expect_block_end();
        for (;;) {
            Body b = body({"elif", "else", "endif"});
            n.branches.emplace_back(std::move(condition), std::move(b));
            const std::string keyword = next().text;
            if (keyword == "endif") {
                expect_block_end();
                return n;
            }
            if (keyword == "else") {
                expect_block_end();
                Body last = body({"endif"});
                n.branches.emplace_back(nullptr, std::move(last));
                close("endif");
                return n;
            }
            condition = expression();  // elif
            expect_block_end();
        }
    }

    std::vector<std::string> targets() {
        std::vector<std::string> names{expect_name()};
        while (is_op(",")) {
            next();
            names.push_back(expect_name());
        }
        return names;
    }

    Node for_loop(const Token& t) {
        Node n = at(t, Node::Kind::for_loop);
        const bool parenthesised = is_op("(");
        if (parenthesised) next();
        n.targets = targets();
        if (parenthesised) expect_op(")");
        if (!is_name("in")) fail_at(peek(), "expected 'in' in a for loop, got " + shown(peek()));
        next();
        n.expr = expression(false);
        if (is_name("if")) {
            next();
            n.condition = expression(false);
        }
        if (is_name("recursive")) fail_at(peek(), "recursive for loops are not supported in chat templates");
        expect_block_end();
        ++loops_;
        n.body = body({"else", "endfor"});
        --loops_;
        if (next().text == "else") {
            expect_block_end();
            n.else_body = body({"endfor"});
            close("endfor");
        } else {
            expect_block_end();
        }
        return n;
    }

    Node set(const Token& t) {
        Node n = at(t, Node::Kind::set);
        n.targets = {expect_name()};
        if (is_op(".")) {
            next();
            n.attribute = expect_name();
        } else {
            while (is_op(",")) {
                next();
                n.targets.push_back(expect_name());
            }
        }
        if (peek().kind == Token::Kind::block_end && n.targets.size() == 1 && n.attribute.empty()) {
            next();
            n.kind = Node::Kind::set_block;
            n.body = body({"endset"});
            close("endset");
            return n;
        }
        expect_op("=");
        n.expr = expression();
        expect_block_end();
        return n;
    }

    Node macro(const Token& t) {
        Node n = at(t, Node::Kind::macro);
        n.text = expect_name();
        expect_op("(");
        while (!is_op(")")) {
            std::string name = expect_name();
            ExprPtr fallback;
            if (is_op("=")) {
                next();
                fallback = expression();
            }
            n.parameters.emplace_back(std::move(name), std::move(fallback));
            if (!is_op(")")) expect_op(",");
        }
        next();
        expect_block_end();
        const int loops = loops_;
        loops_ = 0;  // a macro's body is not inside the loop around its definition
        n.body = body({"endmacro"});
        loops_ = loops;
        close("endmacro");
        return n;
    }

    // ---- Expressions, by jinja2's precedence -------------------------------------------------------

    ExprPtr make(Expr::Kind kind, const Token& t) {
        auto e = std::make_unique<Expr>();
        e->kind = kind;
        e->line = t.line;
        e->column = t.column;
        return e;
    }

    ExprPtr expression(bool with_conditional = true) {
        const Depth depth(depth_, peek());
        ExprPtr e = or_expr();
        if (with_conditional) {
            while (is_name("if")) {
                const Token& t = next();
                auto c = make(Expr::Kind::conditional, t);
                c->a = std::move(e);
                c->b = or_expr();
                if (is_name("else")) {
                    next();
                    c->c = expression();
                }
                e = std::move(c);
            }
        }
        return e;
    }

    ExprPtr or_expr() {
        ExprPtr e = and_expr();
        while (is_name("or")) {
            auto o = make(Expr::Kind::logical_or, next());
            o->a = std::move(e);
            o->b = and_expr();
            e = std::move(o);
        }
        return e;
    }

    ExprPtr and_expr() {
        ExprPtr e = not_expr();
        while (is_name("and")) {
            auto o = make(Expr::Kind::logical_and, next());
            o->a = std::move(e);
            o->b = not_expr();
            e = std::move(o);
        }
        return e;
    }

    ExprPtr not_expr() {
        if (is_name("not")) {
            const Depth depth(depth_, peek());
            auto o = make(Expr::Kind::logical_not, next());
            o->a = not_expr();
            return o;
        }
        return compare();
    }

    ExprPtr compare() {
        ExprPtr e = math1();
        ExprPtr chain;
        for (;;) {
            std::string op;
            const Token& t = peek();
            if (t.kind == Token::Kind::op && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" ||
                                              t.text == "<=" || t.text == ">=")) {
                op = next().text;
            } else if (is_name("in")) {
                next();
                op = "in";
            } else if (is_name("not") && is_name("in", 1)) {
                next();
                next();
                op = "not in";
            } else {
                break;
            }
            if (!chain) {
                chain = make(Expr::Kind::compare, t);
                chain->a = std::move(e);
            }
            chain->ops.push_back(op);
            chain->items.push_back(math1());
        }
        return chain ? std::move(chain) : std::move(e);
    }

    ExprPtr binary_chain(ExprPtr (Parser::*operand)(), std::initializer_list<const char*> ops) {
        ExprPtr e = (this->*operand)();
        for (;;) {
            const char* found = nullptr;
            for (const char* op : ops)
                if (is_op(op)) found = op;
            if (!found) return e;
            auto b = make(Expr::Kind::binary, next());
            b->name = found;
            b->a = std::move(e);
            b->b = (this->*operand)();
            e = std::move(b);
        }
    }
    ExprPtr math1() { return binary_chain(&Parser::concat, {"+", "-"}); }
    ExprPtr concat() { return binary_chain(&Parser::math2, {"~"}); }
    ExprPtr math2() { return binary_chain(&Parser::power, {"*", "/", "//", "%"}); }
    ExprPtr power() { return binary_chain(&Parser::unary_with_filters, {"**"}); }
    ExprPtr unary_with_filters() { return unary(true); }

    ExprPtr unary(bool with_filters) {
        const Depth depth(depth_, peek());
        ExprPtr e;
        if (is_op("-") || is_op("+")) {
            const Token& t = next();
            e = make(Expr::Kind::negate, t);
            e->name = t.text;
            e->a = unary(false);
        } else {
            e = primary();
        }
        e = postfix(std::move(e));
        if (with_filters) e = filters(std::move(e));
        return e;
    }

    ExprPtr primary() {
        const Token& t = peek();
        switch (t.kind) {
            case Token::Kind::name: {
                next();
                auto e = make(Expr::Kind::literal, t);
                if (t.text == "true" || t.text == "True") e->value = Value::of(true);
                else if (t.text == "false" || t.text == "False") e->value = Value::of(false);
                else if (t.text == "none" || t.text == "None") e->value = Value::none();
                else {
                    e->kind = Expr::Kind::name;
                    e->name = t.text;
                }
                return e;
            }
            case Token::Kind::string: {
                auto e = make(Expr::Kind::literal, t);
                std::string s = next().text;
                while (peek().kind == Token::Kind::string) s += next().text;  // adjacent literals join
                e->value = Value::of(std::move(s));
                return e;
            }
            case Token::Kind::integer: {
                next();
                auto e = make(Expr::Kind::literal, t);
                std::int64_t v = 0;
                const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
                if (r.ec != std::errc()) fail_at(t, "the integer " + t.text + " is too large");
                e->value = Value::of(v);
                return e;
            }
            case Token::Kind::floating: {
                next();
                auto e = make(Expr::Kind::literal, t);
                e->value = Value::of(std::strtod(t.text.c_str(), nullptr));
                return e;
            }
            case Token::Kind::op:
                if (t.text == "(") return parenthesised();
                if (t.text == "[") return sequence(Expr::Kind::list, "]");
                if (t.text == "{") return dict();
                [[fallthrough]];
            default: fail_at(t, "expected an expression, got " + shown(t));
        }
    }

    ExprPtr parenthesised() {
        const Token& t = next();
        if (is_op(")")) {
            next();
            return make(Expr::Kind::tuple, t);
        }
        ExprPtr first = expression();
        if (!is_op(",")) {
            expect_op(")");
            return first;
        }
        auto tuple = make(Expr::Kind::tuple, t);
        tuple->items.push_back(std::move(first));
        while (is_op(",")) {
            next();
            if (is_op(")")) break;
            tuple->items.push_back(expression());
        }
        expect_op(")");
        return tuple;
    }

    ExprPtr sequence(Expr::Kind kind, const char* close) {
        auto e = make(kind, next());
        while (!is_op(close)) {
            e->items.push_back(expression());
            if (!is_op(close)) expect_op(",");
        }
        next();
        return e;
    }

    ExprPtr dict() {
        auto e = make(Expr::Kind::dict, next());
        while (!is_op("}")) {
            e->items.push_back(expression());
            expect_op(":");
            e->items.push_back(expression());
            if (!is_op("}")) expect_op(",");
        }
        next();
        return e;
    }

    ExprPtr postfix(ExprPtr e) {
        for (;;) {
            if (is_op(".")) {
                const Token& t = next();
                auto a = make(Expr::Kind::attribute, t);
                if (peek().kind == Token::Kind::integer) {  // x.0 is x[0] in jinja2
                    a->kind = Expr::Kind::subscript;
                    a->a = std::move(e);
                    a->b = primary();
                } else {
                    a->name = expect_name();
                    a->a = std::move(e);
                }
                e = std::move(a);
            } else if (is_op("[")) {
                e = subscript(std::move(e));
            } else if (is_op("(")) {
                auto c = make(Expr::Kind::call, peek());
                c->a = std::move(e);
                arguments(*c);
                e = std::move(c);
            } else {
                return e;
            }
        }
    }

    ExprPtr subscript(ExprPtr e) {
        const Token& t = next();  // '['
        ExprPtr parts[3];
        int part = 0;
        bool slice = false;
        while (!is_op("]")) {
            if (is_op(":")) {
                next();
                slice = true;
                if (++part > 2) fail_at(peek(), "a slice takes at most start:stop:step");
                continue;
            }
            if (parts[part]) fail_at(peek(), "expected ']' or ':', got " + shown(peek()));
            parts[part] = expression();
        }
        next();
        if (!slice) {
            if (!parts[0]) fail_at(t, "an empty subscript");
            auto s = make(Expr::Kind::subscript, t);
            s->a = std::move(e);
            s->b = std::move(parts[0]);
            return s;
        }
        auto s = make(Expr::Kind::slice, t);
        s->a = std::move(e);
        for (auto& p : parts) s->items.push_back(std::move(p));
        return s;
    }

    // '(' positional and keyword arguments ')'.
    void arguments(Expr& call) {
        expect_op("(");
        while (!is_op(")")) {
            if (is_op("*") || is_op("**")) fail_at(peek(), "*args and **kwargs are not supported in chat templates");
            if (peek().kind == Token::Kind::name && is_op("=", 1)) {
                std::string key = next().text;
                next();
                call.keywords.emplace_back(std::move(key), expression());
            } else {
                if (!call.keywords.empty()) fail_at(peek(), "a positional argument after a keyword argument");
                call.items.push_back(expression());
            }
            if (!is_op(")")) expect_op(",");
        }
        next();
    }

    ExprPtr filters(ExprPtr e) {
        for (;;) {
            if (is_op("|")) {
                const Token& t = next();
                auto f = make(Expr::Kind::filter, t);
                f->name = expect_name();
                while (is_op(".")) {
                    next();
                    f->name += "." + expect_name();
                }
                f->a = std::move(e);
                if (is_op("(")) arguments(*f);
                e = std::move(f);
            } else if (is_name("is")) {
                const Token& t = next();
                auto test = make(Expr::Kind::test, t);
                if (is_name("not")) {
                    next();
                    test->negated = true;
                }
                test->name = expect_name();
                test->a = std::move(e);
                if (is_op("(")) {
                    arguments(*test);
                } else {
                    const Token& arg = peek();
                    const bool takes_one = arg.kind == Token::Kind::string || arg.kind == Token::Kind::integer ||
                                           arg.kind == Token::Kind::floating || is_op("[") || is_op("{") ||
                                           (arg.kind == Token::Kind::name && arg.text != "else" && arg.text != "or" &&
                                            arg.text != "and" && arg.text != "is" && arg.text != "in" && arg.text != "not" &&
                                            arg.text != "if");
                    if (takes_one) test->items.push_back(postfix(primary()));
                }
                e = std::move(test);
            } else if (is_op("(")) {
                auto c = make(Expr::Kind::call, peek());
                c->a = std::move(e);
                arguments(*c);
                e = std::move(c);
            } else {
                return e;
            }
        }
    }

    std::vector<Token> t_;
    std::size_t i_ = 0;
    int depth_ = 0, loops_ = 0;
};

}  // namespace

Program parse(std::string_view source) { return Parser(lex(source)).run(); }

}  // namespace remat::text::jinja
