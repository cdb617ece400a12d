#include "unpickler.hpp"
#include "zip_archive.hpp"

#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

#include "remat/core/in_quotes.hpp"
#include "remat/hf/pytorch_bin.hpp"

namespace remat::hf::detail {

std::string_view kind_name(Kind k) {
    switch (k) {
        case Kind::None: return "None";
        case Kind::Bool: return "a bool";
        case Kind::Int: return "an int";
        case Kind::Float: return "a float";
        case Kind::Str: return "a string";
        case Kind::Tuple: return "a tuple";
        case Kind::List: return "a list";
        case Kind::Dict: return "a dict";
        case Kind::Global: return "a class or function";
        case Kind::Storage: return "a storage";
        case Kind::Tensor: return "a tensor";
    }
    return "?";
}

std::string list_string(const std::vector<std::size_t>& v) {
    std::string s = "(";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + (v.size() == 1 ? ",)" : ")");
}

namespace {

std::string hex_byte(unsigned char c) {
    static const char hex[] = "0123456789abcdef";
    return std::string("0x") + hex[c >> 4] + hex[c & 15];
}

struct StorageType {
    std::string_view name;  // torch.<name>
    DType dtype;
};
constexpr StorageType storage_types[] = {
    {"DoubleStorage", DType::F64}, {"FloatStorage", DType::F32}, {"HalfStorage", DType::F16},
    {"BFloat16Storage", DType::BF16}, {"LongStorage", DType::I64}, {"IntStorage", DType::I32},
    {"ShortStorage", DType::I16}, {"CharStorage", DType::I8}, {"ByteStorage", DType::U8},
    {"BoolStorage", DType::BOOL},
};

enum class Global : std::uint8_t { OrderedDict, RebuildTensorV2, RebuildParameter, Storage };

const char* opcode_name(unsigned char op) {
    switch (op) {
        case '(': return "MARK"; case '.': return "STOP"; case '0': return "POP"; case '1': return "POP_MARK";
        case '2': return "DUP"; case 'F': return "FLOAT"; case 'I': return "INT"; case 'J': return "BININT";
        case 'K': return "BININT1"; case 'L': return "LONG"; case 'M': return "BININT2"; case 'N': return "NONE";
        case 'P': return "PERSID"; case 'Q': return "BINPERSID"; case 'R': return "REDUCE"; case 'S': return "STRING";
        case 'T': return "BINSTRING"; case 'U': return "SHORT_BINSTRING"; case 'V': return "UNICODE";
        case 'X': return "BINUNICODE"; case 'a': return "APPEND"; case 'b': return "BUILD"; case 'c': return "GLOBAL";
        case 'd': return "DICT"; case '}': return "EMPTY_DICT"; case 'e': return "APPENDS"; case 'g': return "GET";
        case 'h': return "BINGET"; case 'i': return "INST"; case 'j': return "LONG_BINGET"; case 'l': return "LIST";
        case ']': return "EMPTY_LIST"; case 'o': return "OBJ"; case 'p': return "PUT"; case 'q': return "BINPUT";
        case 'r': return "LONG_BINPUT"; case 's': return "SETITEM"; case 't': return "TUPLE"; case ')': return "EMPTY_TUPLE";
        case 'u': return "SETITEMS"; case 'G': return "BINFLOAT"; case 0x80: return "PROTO"; case 0x81: return "NEWOBJ";
        case 0x82: return "EXT1"; case 0x83: return "EXT2"; case 0x84: return "EXT4"; case 0x85: return "TUPLE1";
        case 0x86: return "TUPLE2"; case 0x87: return "TUPLE3"; case 0x88: return "NEWTRUE"; case 0x89: return "NEWFALSE";
        case 0x8a: return "LONG1"; case 0x8b: return "LONG4"; case 'B': return "BINBYTES"; case 'C': return "SHORT_BINBYTES";
        case 0x8c: return "SHORT_BINUNICODE"; case 0x8d: return "BINUNICODE8"; case 0x8e: return "BINBYTES8";
        case 0x8f: return "EMPTY_SET"; case 0x90: return "ADDITEMS"; case 0x91: return "FROZENSET";
        case 0x92: return "NEWOBJ_EX"; case 0x93: return "STACK_GLOBAL"; case 0x94: return "MEMOIZE";
        case 0x95: return "FRAME"; case 0x96: return "BYTEARRAY8"; case 0x97: return "NEXT_BUFFER";
        case 0x98: return "READONLY_BUFFER";
        default: return nullptr;
    }
}

class Unpickler {
public:
    Unpickler(std::string file, std::string root, std::span<const std::byte> data, zip_t* zip, std::size_t archive_bytes)
        : file_(std::move(file)), root_(std::move(root)), data_(data), zip_(zip), archive_bytes_(archive_bytes) {}

    Value run() {
        while (true) {
            if (pos_ >= data_.size()) fail("data.pkl ends without STOP");
            op_at_ = pos_;
            const auto op = static_cast<unsigned char>(data_[pos_++]);
            switch (op) {
                case 0x80: {  // PROTO
                    const unsigned version = u8();
                    if (version < 2 || version > 5) fail_at("pickle protocol " + std::to_string(version) + " is not supported");
                    break;
                }
                case 0x95: {  // FRAME: a length prefix only; opcodes continue inside
                    const std::uint64_t n = le<std::uint64_t>(8);
                    if (n > data_.size() - pos_) fail_at("FRAME of " + std::to_string(n) + " bytes runs past the end of data.pkl");
                    break;
                }
                case '(':
                    marks_.push_back(stack_.size());
                    if (marks_.size() > PytorchBinFile::max_pickle_depth)
                        fail_at("nesting deeper than " + std::to_string(PytorchBinFile::max_pickle_depth) + " levels");
                    break;
                case '.': {  // STOP
                    if (!marks_.empty() || stack_.size() != 1)
                        fail_at("STOP with " + std::to_string(stack_.size()) + " values and " + std::to_string(marks_.size()) +
                                " open MARKs on the stack (expected one value)");
                    return stack_.back();
                }
                case 'N': push({Kind::None}); break;
                case 0x88: push({Kind::Bool, 1}); break;
                case 0x89: push({Kind::Bool, 0}); break;
                case 'J': push({Kind::Int, static_cast<std::int32_t>(le<std::uint32_t>(4))}); break;
                case 'K': push({Kind::Int, u8()}); break;
                case 'M': push({Kind::Int, static_cast<std::int64_t>(le<std::uint16_t>(2))}); break;
                case 0x8a: {  // LONG1: n bytes, little-endian two's complement
                    const unsigned n = u8();
                    if (n > 8) fail_at("integer of " + std::to_string(n) + " bytes is too large");
                    const std::byte* p = take(n);
                    std::uint64_t v = 0;
                    for (unsigned k = 0; k < n; ++k) v |= static_cast<std::uint64_t>(p[k]) << (8 * k);
                    if (n > 0 && n < 8 && (static_cast<unsigned>(p[n - 1]) & 0x80u)) v |= ~std::uint64_t{0} << (8 * n);
                    push({Kind::Int, static_cast<std::int64_t>(v)});
                    break;
                }
                case 'G': {  // BINFLOAT: big-endian double
                    const std::byte* p = take(8);
                    std::uint64_t v = 0;
                    for (unsigned k = 0; k < 8; ++k) v = (v << 8) | static_cast<std::uint64_t>(p[k]);
                    Value x{Kind::Float};
                    x.f = std::bit_cast<double>(v);
                    push(x);
                    break;
                }
                case 'X': push_string(le<std::uint32_t>(4)); break;
                case 0x8c: push_string(u8()); break;
                case 0x8d: push_string(le<std::uint64_t>(8)); break;
                case ')': push(container(Kind::Tuple)); break;
                case ']': push(container(Kind::List)); break;
                case '}': push(container(Kind::Dict)); break;
                case 't': {
                    const std::size_t from = pop_mark();
                    Value t = container(Kind::Tuple);
                    seqs_[t.ref].assign(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
                    stack_.resize(from);
                    push(t);
                    break;
                }
                case 0x85: case 0x86: case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
                    const std::size_t n = op - 0x84u;
                    need(n);
                    Value t = container(Kind::Tuple);
                    seqs_[t.ref].assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
                    stack_.resize(stack_.size() - n);
                    push(t);
                    break;
                }
                case 'c': {  // GLOBAL "module\nname\n"
                    const std::string module = line(), name = line();
                    push(global(module, name));
                    break;
                }
                case 0x93: {  // STACK_GLOBAL
                    const Value name = pop(), module = pop();
                    if (module.kind != Kind::Str || name.kind != Kind::Str) fail_at("STACK_GLOBAL needs two strings");
                    push(global(strings_[module.ref], strings_[name.ref]));
                    break;
                }
                case 'R': {  // REDUCE: callable(*args)
                    const Value args = pop(), callable = pop();
                    push(reduce(callable, args));
                    break;
                }
                case 'b': {  // BUILD: only an OrderedDict's state (its _metadata), ignored
                    const Value state = pop();
                    need(1);
                    const Value target = stack_.back();
                    if (target.kind != Kind::Dict || (state.kind != Kind::Dict && state.kind != Kind::None))
                        fail_at("BUILD of " + std::string(kind_name(target.kind)) + " with " + std::string(kind_name(state.kind)) +
                                " is not allowed (only an OrderedDict's _metadata)");
                    break;
                }
                case 's': {  // SETITEM
                    const Value v = pop(), k = pop();
                    set_items(std::vector<Value>{k, v});
                    break;
                }
                case 'u': {  // SETITEMS
                    const std::size_t from = pop_mark();
                    std::vector<Value> kv(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
                    stack_.resize(from);
                    if (kv.size() % 2) fail_at("SETITEMS with an odd number of values");
                    set_items(kv);
                    break;
                }
                case 'a': {  // APPEND
                    const Value v = pop();
                    append(std::vector<Value>{v});
                    break;
                }
                case 'e': {  // APPENDS
                    const std::size_t from = pop_mark();
                    std::vector<Value> items(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
                    stack_.resize(from);
                    append(items);
                    break;
                }
                case 'q': put(u8()); break;
                case 'r': put(le<std::uint32_t>(4)); break;
                case 0x94: put(memo_.size()); break;
                case 'h': get(u8()); break;
                case 'j': get(le<std::uint32_t>(4)); break;
                case 'Q': push(persistent(pop())); break;
                default:
                    if (const char* name = opcode_name(op))
                        fail_at(std::string("pickle opcode ") + name + " is not supported (a state dict does not need it)");
                    fail_at("unknown pickle opcode " + hex_byte(op));
            }
        }
    }

    // What it built: its arenas, moved out.
    Pickle result(Value top) && {
        return {top, std::move(strings_), std::move(seqs_), std::move(dicts_), std::move(storage_refs_), std::move(tensors_)};
    }
    [[noreturn]] void fail(const std::string& what) const { throw FormatError(file_ + ": " + what); }

private:
    [[noreturn]] void fail_at(const std::string& what) const {
        fail("data.pkl at byte " + std::to_string(op_at_) + ": " + what);
    }

    // ---- reading the byte stream
    const std::byte* take(std::size_t n) {
        if (n > data_.size() - pos_)
            fail_at("truncated: the opcode needs " + std::to_string(n) + " more bytes, " + std::to_string(data_.size() - pos_) +
                    " remain");
        const std::byte* p = data_.data() + pos_;
        pos_ += n;
        return p;
    }
    unsigned u8() { return static_cast<unsigned>(*take(1)); }
    template <class T>
    T le(std::size_t n) {
        const std::byte* p = take(n);
        std::uint64_t v = 0;
        for (std::size_t k = 0; k < n; ++k) v |= static_cast<std::uint64_t>(p[k]) << (8 * k);
        return static_cast<T>(v);
    }
    std::string line() {
        const std::size_t start = pos_;
        while (pos_ < data_.size() && data_[pos_] != std::byte{'\n'}) ++pos_;
        if (pos_ >= data_.size()) fail_at("truncated: GLOBAL's name has no end of line");
        std::string s(reinterpret_cast<const char*>(data_.data() + start), pos_ - start);
        ++pos_;
        return s;
    }

    // ---- the stack, the memo, the arenas
    void count(std::size_t n = 1) {
        objects_ += n;
        if (objects_ > PytorchBinFile::max_pickle_objects)
            fail_at("more than " + std::to_string(PytorchBinFile::max_pickle_objects) + " objects");
    }
    void push(Value v) {
        count();
        stack_.push_back(v);
    }
    std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
    void need(std::size_t n) {
        if (stack_.size() - floor() < n) fail_at("stack underflow");
    }
    Value pop() {
        need(1);
        Value v = stack_.back();
        stack_.pop_back();
        return v;
    }
    std::size_t pop_mark() {
        if (marks_.empty()) fail_at("no MARK to close");
        const std::size_t from = marks_.back();
        marks_.pop_back();
        return from;
    }
    Value container(Kind kind) {
        Value v{kind};
        if (kind == Kind::Dict) {
            v.ref = static_cast<std::uint32_t>(dicts_.size());
            dicts_.emplace_back();
        } else {
            v.ref = static_cast<std::uint32_t>(seqs_.size());
            seqs_.emplace_back();
        }
        return v;
    }
    void push_string(std::uint64_t n) {
        const std::byte* p = take(static_cast<std::size_t>(n));
        Value v{Kind::Str};
        v.ref = static_cast<std::uint32_t>(strings_.size());
        strings_.emplace_back(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
        push(v);
    }
    void put(std::uint64_t index) {
        need(1);
        count();
        memo_[index] = stack_.back();
    }
    void get(std::uint64_t index) {
        auto it = memo_.find(index);
        if (it == memo_.end()) fail_at("memo entry " + std::to_string(index) + " is read before it is written");
        push(it->second);
    }
    void set_items(const std::vector<Value>& kv) {
        need(1);
        const Value d = stack_.back();
        if (d.kind != Kind::Dict) fail_at("SETITEM(S) on " + std::string(kind_name(d.kind)));
        count(kv.size() / 2);
        for (std::size_t k = 0; k + 1 < kv.size(); k += 2) dicts_[d.ref].emplace_back(kv[k], kv[k + 1]);
    }
    void append(const std::vector<Value>& items) {
        need(1);
        const Value l = stack_.back();
        if (l.kind != Kind::List) fail_at("APPEND(S) on " + std::string(kind_name(l.kind)));
        count(items.size());
        seqs_[l.ref].insert(seqs_[l.ref].end(), items.begin(), items.end());
    }

    // ---- the allowed globals
    Value global(const std::string& module, const std::string& name) {
        Value v{Kind::Global};
        if (module == "collections" && name == "OrderedDict") {
            v.i = static_cast<std::int64_t>(Global::OrderedDict);
            return v;
        }
        if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
            v.i = static_cast<std::int64_t>(Global::RebuildTensorV2);
            return v;
        }
        if (module == "torch._utils" && name == "_rebuild_parameter") {
            v.i = static_cast<std::int64_t>(Global::RebuildParameter);
            return v;
        }
        if (module == "torch")
            for (std::size_t k = 0; k < std::size(storage_types); ++k)
                if (name == storage_types[k].name) {
                    v.i = static_cast<std::int64_t>(Global::Storage);
                    v.ref = static_cast<std::uint32_t>(k);
                    return v;
                }
        fail("refusing to load global " + in_quotes(module + "." + name) + " (only a state dict's tensors are allowed)");
    }

    const std::vector<Value>& tuple(const Value& v, const char* what) {
        if (v.kind != Kind::Tuple) fail_at(std::string(what) + " must be a tuple, not " + std::string(kind_name(v.kind)));
        return seqs_[v.ref];
    }
    std::size_t non_negative(const Value& v, const char* what) {
        if (v.kind != Kind::Int || v.i < 0)
            fail_at(std::string(what) + " must be a non-negative int" + (v.kind == Kind::Int ? ", not " + std::to_string(v.i) : ""));
        return static_cast<std::size_t>(v.i);
    }
    std::vector<std::size_t> int_tuple(const Value& v, const char* what) {
        const auto& items = tuple(v, what);
        if (items.size() > PytorchBinFile::max_dims)
            fail_at(std::string(what) + " has " + std::to_string(items.size()) + " dimensions, more than " +
                    std::to_string(PytorchBinFile::max_dims));
        std::vector<std::size_t> out;
        for (const Value& x : items) out.push_back(non_negative(x, what));
        return out;
    }

    Value reduce(const Value& callable, const Value& args_value) {
        if (callable.kind != Kind::Global || static_cast<Global>(callable.i) == Global::Storage)
            fail_at("REDUCE may only call collections.OrderedDict, torch._utils._rebuild_tensor_v2 or "
                    "torch._utils._rebuild_parameter, not " +
                    (callable.kind == Kind::Global ? "torch." + std::string(storage_types[callable.ref].name)
                                                   : std::string(kind_name(callable.kind))));
        const std::vector<Value> args = tuple(args_value, "REDUCE's arguments");
        switch (static_cast<Global>(callable.i)) {
            case Global::OrderedDict:
                if (!args.empty()) fail_at("collections.OrderedDict is called with arguments");
                return container(Kind::Dict);
            case Global::RebuildParameter:  // (data, requires_grad, backward_hooks)
                if (args.size() != 3 || args[0].kind != Kind::Tensor || args[1].kind != Kind::Bool || args[2].kind != Kind::Dict)
                    fail_at("torch._utils._rebuild_parameter expects (tensor, bool, OrderedDict)");
                return args[0];
            case Global::RebuildTensorV2: {
                // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
                if (args.size() != 6 && args.size() != 7)
                    fail_at("torch._utils._rebuild_tensor_v2 expects 6 or 7 arguments, not " + std::to_string(args.size()));
                if (args[0].kind != Kind::Storage) fail_at("torch._utils._rebuild_tensor_v2: argument 1 must be a storage");
                TensorSpec t{args[0].ref, non_negative(args[1], "storage_offset"), int_tuple(args[2], "size"),
                             int_tuple(args[3], "stride")};
                if (t.size.size() != t.stride.size())
                    fail_at("size " + list_string(t.size) + " and stride " + list_string(t.stride) + " differ in length");
                if (args[4].kind != Kind::Bool) fail_at("torch._utils._rebuild_tensor_v2: requires_grad must be a bool");
                if (args[5].kind != Kind::Dict) fail_at("torch._utils._rebuild_tensor_v2: backward_hooks must be an OrderedDict");
                if (args.size() == 7 && args[6].kind != Kind::None && !(args[6].kind == Kind::Dict && dicts_[args[6].ref].empty()))
                    fail_at("tensor metadata (conjugate or negative bits) is not supported");
                Value v{Kind::Tensor};
                v.ref = static_cast<std::uint32_t>(tensors_.size());
                tensors_.push_back(std::move(t));
                return v;
            }
            case Global::Storage: break;
        }
        fail_at("unreachable");
    }

    // ('storage', torch.FloatStorage, key, location, numel), checked against the archive at once.
    Value persistent(const Value& pid) {
        const auto& f = tuple(pid, "a persistent id");
        if (f.size() != 5 || f[0].kind != Kind::Str || strings_[f[0].ref] != "storage")
            fail_at("persistent id is not ('storage', type, key, location, numel)");
        if (f[1].kind != Kind::Global || static_cast<Global>(f[1].i) != Global::Storage)
            fail_at("persistent id's storage type is " + std::string(kind_name(f[1].kind)) + ", not a torch.*Storage");
        if (f[2].kind != Kind::Str || f[3].kind != Kind::Str) fail_at("persistent id's key and location must be strings");
        const StorageType& type = storage_types[f[1].ref];
        const std::string& key = strings_[f[2].ref];
        const std::size_t numel = non_negative(f[4], "a storage's numel");
        Value v{Kind::Storage};
        if (auto it = storage_index_.find(key); it != storage_index_.end()) {
            const StorageRef& s = storage_refs_[it->second];
            if (s.dtype != type.dtype || s.numel != numel)
                fail("storage " + in_quotes(key) + " is described twice, as " + std::to_string(s.numel) + " " +
                     std::string(s.type_name) + " elements and as " + std::to_string(numel) + " " + std::string(type.name));
            v.ref = it->second;
            return v;
        }
        const std::string entry_name = root_ + "/data/" + key;
        const zip_int64_t entry = zip_name_locate(zip_, entry_name.c_str(), ZIP_FL_ENC_RAW);
        if (entry < 0) fail("storage " + in_quotes(key) + " is missing from the archive (no " + in_quotes(entry_name) + ")");
        const std::size_t bytes = checked_entry_size(zip_, static_cast<zip_uint64_t>(entry), archive_bytes_,
                                                     file_ + ": storage " + in_quotes(key) + " (" + in_quotes(entry_name) + ")");
        const std::size_t element = size_of(type.dtype);
        if (numel > std::numeric_limits<std::size_t>::max() / element || bytes != numel * element)
            fail("storage " + in_quotes(key) + " (" + in_quotes(entry_name) + ") holds " + std::to_string(bytes) + " bytes, but " +
                 std::to_string(numel) + " " + std::string(type.name) + " elements need " +
                 (numel > std::numeric_limits<std::size_t>::max() / element ? std::string("more") : std::to_string(numel * element)));
        count();
        v.ref = static_cast<std::uint32_t>(storage_refs_.size());
        storage_index_.emplace(key, v.ref);
        storage_refs_.push_back({key, type.dtype, type.name, numel, static_cast<zip_uint64_t>(entry)});
        return v;
    }

    std::string file_, root_;
    std::span<const std::byte> data_;
    zip_t* zip_;
    std::size_t archive_bytes_;
    std::size_t pos_ = 0, op_at_ = 0, objects_ = 0;
    std::vector<Value> stack_;
    std::vector<std::size_t> marks_;
    std::unordered_map<std::uint64_t, Value> memo_;
    std::vector<std::string> strings_;
    std::vector<std::vector<Value>> seqs_;
    std::vector<std::vector<std::pair<Value, Value>>> dicts_;
    std::vector<StorageRef> storage_refs_;
    std::unordered_map<std::string, std::uint32_t> storage_index_;
    std::vector<TensorSpec> tensors_;
};

}  // namespace

Pickle unpickle(const std::string& file, const std::string& root, std::span<const std::byte> data, zip_t* zip,
               std::size_t archive_bytes) {
    Unpickler u(file, root, data, zip, archive_bytes);
    const Value top = u.run();
    return std::move(u).result(top);
}

}  // namespace remat::hf::detail
