"""Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/.

Rerun from anywhere (plain Python 3, no packages):  python3 tests/fuzz/make_seeds.py
Seeds are small valid files and interesting invalid ones. Files this script does not write
(crash reproducers, entries merged in by `scripts/fuzz --merge`) are left alone; a seed it
writes is named seed-*, so a rerun replaces exactly its own files.
"""
import glob
import json
import os
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
FIXTURES = os.path.join(HERE, "..", "fixtures")


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


def clear(target):
    for path in glob.glob(os.path.join(CORPUS, target, "seed-*")):
        os.remove(path)


# ------------------------------------------------------------------------------------------ safetensors

def safetensors(entries, metadata=None, pad=True, header=None):
    """entries: [(name, dtype, shape, bytes)], laid out in order; or a raw header string."""
    if header is None:
        h, data, offset = {}, b"", 0
        if metadata:
            h["__metadata__"] = metadata
        for name, dtype, shape, raw in entries:
            h[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
            data += raw
            offset += len(raw)
        header = json.dumps(h, separators=(",", ":"))
    else:
        data = b"".join(e for e in entries)
    text = header.encode() if isinstance(header, str) else header
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def f32(*xs):
    return struct.pack("<%df" % len(xs), *xs)


def i64(*xs):
    return struct.pack("<%dq" % len(xs), *xs)


def safetensors_seeds():
    t = "safetensors"
    clear(t)
    write(t, "f32-i64-f64-metadata", safetensors(
        [("w", "F32", [2, 2], f32(1, 2, 3, 4)), ("ids", "I64", [2], i64(7, -8)), ("x", "F64", [], struct.pack("<d", 0.5))],
        {"format": "pt"}))
    write(t, "half-bfloat", safetensors(
        [("h", "F16", [3], struct.pack("<3H", 0x3C00, 0x0001, 0x7E00)), ("b", "BF16", [2], struct.pack("<2H", 0x3F80, 0xFF80))]))
    write(t, "small-ints", safetensors(
        [("a", "I32", [2], struct.pack("<2i", -1, 2)), ("b", "I16", [1], struct.pack("<h", -3)), ("c", "I8", [2], b"\x80\x7f"),
         ("d", "U8", [1], b"\xff"), ("e", "U16", [1], b"\xff\xff"), ("f", "U32", [1], b"\xff\xff\xff\xff"),
         ("g", "BOOL", [2], b"\x00\x01"), ("h", "U64", [1], b"\x01" * 8), ("i", "F8_E4M3", [1], b"\x38"),
         ("j", "C64", [1], f32(1, 0))]))
    write(t, "empty-tensors", safetensors([("z", "F32", [0, 3], b""), ("s", "F32", [], f32(1.5))]))
    write(t, "no-tensors", safetensors([], pad=False))
    write(t, "only-metadata", safetensors([], {"a": "b", "c": "\u00e9"}))
    # Invalid, one problem each.
    write(t, "empty-file", b"")
    write(t, "too-short", b"\x08\x00\x00")
    valid = safetensors([("w", "F32", [2], f32(1, 2))])
    write(t, "truncated", valid[:-3])
    write(t, "header-past-end", struct.pack("<Q", 1000) + b"{}")
    write(t, "header-too-long", struct.pack("<Q", 1 << 40) + b"{}")
    write(t, "not-json", safetensors([], header="{not json"))
    write(t, "not-object", safetensors([], header="[1, 2]  "))
    write(t, "nul-in-header", safetensors([], header="{}\0\0\0\0\0\0", pad=False))
    write(t, "bad-utf8", safetensors([], header=b'{"\xff":1}'))
    write(t, "overlap", safetensors([f32(1, 2)], header='{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                                         '"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'))
    write(t, "out-of-bounds", safetensors([f32(1)], header='{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'))
    write(t, "hole", safetensors([f32(1, 2)], header='{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}'))
    write(t, "unknown-dtype", safetensors([f32(1)], header='{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}'))
    write(t, "sub-byte-dtype", safetensors([b"\x00"], header='{"a":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}'))
    write(t, "count-mismatch", safetensors([f32(1, 2)], header='{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}'))
    write(t, "overflow", safetensors([], header='{"a":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}}'))
    write(t, "duplicate-name", safetensors([f32(1)], header='{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                                                '"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'))
    write(t, "extra-key", safetensors([f32(1)], header='{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}'))
    write(t, "negative-offset", safetensors([f32(1)], header='{"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}'))
    write(t, "metadata-not-string", safetensors([], header='{"__metadata__":{"k":1}}'))
    write(t, "deep-nesting", safetensors([], header='{"a":' + "[" * 200 + "]" * 200 + "}"))
    write(t, "trailing-bytes", valid + b"xx")


# ---------------------------------------------------------------------------------------------- index

def index_seeds():
    t = "index"
    clear(t)
    s1, s2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"

    def index(weight_map, **extra):
        return json.dumps(dict(extra, weight_map=weight_map), indent=1)

    write(t, "valid", index({"a": s1, "b": s1, "c": s2, "d": s2}, metadata={"total_size": 26}))
    write(t, "one-shard", index({"a": s1}))
    write(t, "missing-shard", index({"a": s1, "x": "model-00003-of-00003.safetensors"}))
    write(t, "not-in-shard", index({"c": s1}))
    write(t, "name-in-two-shards", index({"a": s1, "c": s2, "z": "dup.safetensors"}))
    write(t, "bad-shard", index({"a": "bad.safetensors"}))
    write(t, "path-traversal", index({"a": "../model-00001-of-00002.safetensors"}))
    write(t, "dot-dot", index({"a": ".."}))
    write(t, "not-a-string", index({"a": 3}))
    write(t, "empty-name", index({"a": ""}))
    write(t, "no-weight-map", json.dumps({"metadata": {}}))
    write(t, "weight-map-list", json.dumps({"weight_map": ["a"]}))
    write(t, "not-json", '{"weight_map": {"a": ')
    write(t, "empty", "")
    write(t, "index-as-shard", index({"a": "model.safetensors.index.json"}))


# ---------------------------------------------------------------------------------------- config.json

def config_seeds():
    t = "config_json"
    clear(t)
    for model in ("gpt2-tiny", "bert-tiny"):
        with open(os.path.join(FIXTURES, model, "config.json")) as f:
            text = f.read()
        write(t, model, text)
        config = json.loads(text)
        for field in list(config)[2:7]:
            c = dict(config)
            del c[field]
            write(t, "%s-without-%s" % (model, field), json.dumps(c))
        c = dict(config)
        c["vocab_size"] = -1
        write(t, model + "-negative", json.dumps(c))
        c = dict(config)
        c["vocab_size"] = "64"
        write(t, model + "-string", json.dumps(c))
    write(t, "gpt2-indivisible", json.dumps({"vocab_size": 8, "n_embd": 10, "n_layer": 1, "n_head": 3, "n_ctx": 4,
                                             "activation_function": "relu", "n_inner": 7}))
    write(t, "gpt2-activation", json.dumps({"vocab_size": 8, "n_embd": 8, "n_layer": 1, "n_head": 2, "n_positions": 4,
                                            "activation_function": "swish", "resid_pdrop": 2}))
    write(t, "bert-position-type", json.dumps({"vocab_size": 8, "hidden_size": 8, "num_hidden_layers": 1,
                                               "num_attention_heads": 2, "intermediate_size": 4,
                                               "position_embedding_type": "relative_key", "hidden_act": "tanh",
                                               "layer_norm_eps": 0}))
    write(t, "huge-numbers", '{"vocab_size": 18446744073709551615, "n_embd": 1e400, "n_layer": -0, "n_head": 2.5}')
    write(t, "not-object", "[1, 2, 3]")
    write(t, "not-json", '{"vocab_size": ')
    write(t, "empty", "")
    write(t, "nested", '{"vocab_size": ' + "[" * 100 + "]" * 100 + "}")


# --------------------------------------------------------------------------------- pytorch_model.bin

def entries_form(entries):
    """The target's second input form: 0x01, then { u16 name length, name, u32 data length, data }."""
    out = b"\x01"
    for name, data in entries:
        name = name.encode()
        out += struct.pack("<H", len(name)) + name + struct.pack("<I", len(data)) + data
    return out


def pickle_of_state_dict(tensors):
    """A protocol-2 pickle of an OrderedDict name -> torch._utils._rebuild_tensor_v2(storage, ...), written
    opcode by opcode (torch is not needed, and nothing is ever unpickled). tensors: [(name, storage key,
    storage type, numel, offset, size, stride)]."""
    def string(s):
        s = s.encode()
        return b"X" + struct.pack("<I", len(s)) + s

    def integer(v):
        return b"J" + struct.pack("<i", v)

    def tup(xs):
        return b"(" + b"".join(integer(x) for x in xs) + b"t"

    p = b"\x80\x02" + b"ccollections\nOrderedDict\n)R"
    for name, key, storage_type, numel, offset, size, stride in tensors:
        p += string(name)
        p += b"ctorch._utils\n_rebuild_tensor_v2\n("
        p += b"(" + string("storage") + b"ctorch\n" + storage_type.encode() + b"\n" + string(key) + string("cpu") + integer(numel) + b"tQ"
        p += integer(offset) + tup(size) + tup(stride) + b"\x89" + b"ccollections\nOrderedDict\n)R" + b"tR"
        p += b"s"
    return p + b"."


def pytorch_bin_seeds():
    t = "pytorch_bin"
    clear(t)
    # The hostile and broken fixtures of tests/hf/bin_test.cpp, as files and as entries.
    for path in sorted(glob.glob(os.path.join(FIXTURES, "bin", "*.bin"))):
        name = os.path.basename(path)[:-4]
        with open(path, "rb") as f:
            raw = f.read()
        write(t, "file-" + name, b"\x00" + raw)
        try:
            with zipfile.ZipFile(path) as z:
                write(t, "entries-" + name, entries_form([(i.filename, z.read(i)) for i in z.infolist()]))
        except zipfile.BadZipFile:
            pass
    floats = struct.pack("<12f", *range(12))
    views = pickle_of_state_dict([("w", "0", "FloatStorage", 12, 0, [3, 4], [4, 1]),
                                  ("t", "0", "FloatStorage", 12, 1, [2, 3], [1, 4]),
                                  ("h", "1", "HalfStorage", 2, 0, [2], [1]),
                                  ("i", "2", "LongStorage", 1, 0, [], [])])
    write(t, "entries-views", entries_form([("archive/data.pkl", views), ("archive/byteorder", b"little"),
                                            ("archive/data/0", floats), ("archive/data/1", b"\x00\x3c\x00\xc0"),
                                            ("archive/data/2", struct.pack("<q", -5)), ("archive/version", b"3\n")]))
    write(t, "entries-big-endian", entries_form([("archive/data.pkl", views), ("archive/byteorder", b"big")]))
    write(t, "entries-no-pickle", entries_form([("archive/version", b"3\n")]))
    write(t, "entries-empty", b"\x01")
    write(t, "file-empty", b"\x00")


# ------------------------------------------------------------------------------------------- token file

def token_file(ids, width=2, vocab=1000, count=None, version=1, magic=b"REMATTOK", reserved=b""):
    head = magic + struct.pack("<IIQQQ", version, width, len(ids) if count is None else count, 0x0123456789ABCDEF, vocab)
    head += reserved + bytes(64 - len(head) - len(reserved))
    return head + b"".join(struct.pack("<H" if width == 2 else "<I", i) for i in ids)


def token_file_seeds():
    t = "token_file"
    clear(t)
    write(t, "u16", token_file([0, 1, 999, 500]))
    write(t, "u32", token_file([0, 70000, 99999], width=4, vocab=100000))
    write(t, "empty", token_file([]))
    write(t, "id-out-of-range", token_file([1, 1000, 2], vocab=1000))
    write(t, "truncated", token_file([1, 2, 3])[:-1])
    write(t, "too-long", token_file([1, 2, 3]) + b"\0\0")
    write(t, "header-only-part", token_file([])[:40])
    write(t, "bad-magic", token_file([1], magic=b"REMATTOX"))
    write(t, "version-2", token_file([1], version=2))
    write(t, "width-3", token_file([], width=3))
    write(t, "wide-for-small-vocab", token_file([1], width=4, vocab=1000))
    write(t, "vocab-zero", token_file([], vocab=0))
    write(t, "reserved-set", token_file([1], reserved=b"\1"))
    write(t, "count-overflows", token_file([1, 2], count=0x8000000000000001))
    write(t, "count-wraps-to-size", token_file([1, 2], count=0x7FFFFFFFFFFFFFE1))


def read_fixture(*parts):
    with open(os.path.join(FIXTURES, *parts), "rb") as f:
        return f.read()


def tokenizer_seeds():
    """The first byte picks the file the rest is: 0 tokenizer.json, 1 vocab.json, 2 merges.txt."""
    t = "tokenizer"
    clear(t)
    tokenizer_json = read_fixture("tokenizer", "tokenizer.json")
    vocab_json = read_fixture("tokenizer", "vocab.json")
    merges_txt = read_fixture("tokenizer", "merges.txt")
    write(t, "tokenizer-json", b"\x00" + tokenizer_json)
    write(t, "vocab-json", b"\x01" + vocab_json)
    write(t, "merges-txt", b"\x02" + merges_txt)
    write(t, "merges-few", b"\x02#version: 0.2\n" + b"\n".join(merges_txt.split(b"\n")[1:4]) + b"\n")
    write(t, "vocab-duplicate-id", b"\x01" + vocab_json.replace(b"{", b'{"zz": 0, ', 1))
    write(t, "vocab-deep", b"\x01" + b"[" * 100 + b"]" * 100)
    write(t, "vocab-trailing", b"\x01" + vocab_json + b"\x00garbage")
    write(t, "merges-bad-line", b"\x02#version: 0.2\na b c\n")
    write(t, "tokenizer-not-bpe", b"\x00" + json.dumps({"model": {"type": "WordPiece", "vocab": {}}}).encode())
    write(t, "tokenizer-deep-added", b"\x00" + b'{"added_tokens": ' + b"[" * 70 + b"]" * 70 + b"}")


def config_model_seeds():
    """config.json texts, each built over the tiny GPT-2 and BERT checkpoints."""
    t = "config_model"
    clear(t)
    gpt2 = json.loads(read_fixture("gpt2-tiny", "config.json"))
    bert = json.loads(read_fixture("bert-tiny", "config.json"))
    write(t, "gpt2", json.dumps(gpt2))
    write(t, "bert", json.dumps(bert))
    for name, change in [("gpt2-layers-0", {"n_layer": 0}), ("gpt2-layers-1e5", {"n_layer": 100000}),
                         ("gpt2-vocab-2e62", {"vocab_size": 1 << 62}), ("gpt2-embd-2e40", {"n_embd": 1 << 40, "n_head": 1}),
                         ("gpt2-vocab-65", {"vocab_size": 65}), ("gpt2-inner", {"n_inner": 1 << 23}),
                         ("gpt2-relu", {"activation_function": "relu"})]:
        write(t, name, json.dumps(dict(gpt2, **change)))
    for name, change in [("bert-layers-1e5", {"num_hidden_layers": 100000}), ("bert-pad", {"pad_token_id": 63}),
                         ("bert-intermediate", {"intermediate_size": 1 << 24}), ("bert-types", {"type_vocab_size": 1 << 20})]:
        write(t, name, json.dumps(dict(bert, **change)))
    write(t, "nested", '{"model_type": "gpt2", "n_layer": ' + "[" * 80 + "]" * 80 + "}")
    write(t, "duplicate", '{"model_type": "gpt2", "n_layer": 1, "n_layer": 2}')


def chat_template_seeds():
    """The published chat templates of tests/fixtures/chat_templates, the language snippets, and a few
    templates that would not end or nest too deep."""
    t = "chat_template"
    clear(t)
    folder = os.path.join(FIXTURES, "chat_templates")
    for path in sorted(glob.glob(os.path.join(folder, "*.jinja"))):
        write(t, os.path.basename(path)[:-len(".jinja")], read_fixture("chat_templates", os.path.basename(path)))
    with open(os.path.join(folder, "snippets.json"), encoding="utf-8") as f:
        for i, case in enumerate(json.load(f)["cases"]):
            write(t, "snippet-%02d" % i, case["template"])
    write(t, "recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")
    write(t, "loops", "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}")
    write(t, "nesting", "{{ " + "(" * 300 + "1" + ")" * 300 + " }}")
    write(t, "unclosed", "{% for m in messages %}{{ m.content ")


if __name__ == "__main__":
    safetensors_seeds()
    index_seeds()
    config_seeds()
    pytorch_bin_seeds()
    token_file_seeds()
    tokenizer_seeds()
    config_model_seeds()
    chat_template_seeds()
    total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(CORPUS, "*", "*")))
    print("corpus: %d files, %d bytes" % (len(glob.glob(os.path.join(CORPUS, "*", "*"))), total))
