#pragma once
// REMAT_MODEL: a model struct written as plainly as any struct, whose member types walks may still
// change (set_checkpointing turns each block into Checkpointed<Block>).
//
//   REMAT_MODEL(Net, (nn::Linear, embed), (Block, b1), (Block, b2), (nn::Linear, head))
//       static constexpr const char* name = "Net";
//       Var operator()(const Var& x) { return head(b2(b1(embed(x)))); }
//   };
//
// opens `template <class M0 = nn::Linear, class M1 = Block, …> struct BasicNet { … }` with its
// members reflected by BOOST_HANA_DEFINE_STRUCT; the body that follows is the struct's own, closed
// by `};`. It also declares the deduction guide (which clang 14, lacking aggregate CTAD, needs) and
// `using Net = BasicNet<>`, the plain model — as std::string is std::basic_string<char>. So
// `Net{…}` builds one, and set_checkpointing(std::move(net)) returns a
// BasicNet<nn::Linear, Checkpointed<Block>, Checkpointed<Block>, nn::Linear>. Use it at namespace
// scope (a template cannot be declared in a function). A member type with a comma is written as
// is: (std::tuple<A, B>, pair).
#include <boost/hana/define_struct.hpp>
#include <boost/preprocessor/arithmetic/dec.hpp>
#include <boost/preprocessor/cat.hpp>
#include <boost/preprocessor/punctuation/comma_if.hpp>
#include <boost/preprocessor/seq/for_each_i.hpp>
#include <boost/preprocessor/tuple/elem.hpp>
#include <boost/preprocessor/tuple/enum.hpp>
#include <boost/preprocessor/tuple/pop_back.hpp>
#include <boost/preprocessor/tuple/size.hpp>
#include <boost/preprocessor/variadic/to_seq.hpp>

#define REMAT_DETAIL_MEMBER_NAME(m) BOOST_PP_TUPLE_ELEM(BOOST_PP_DEC(BOOST_PP_TUPLE_SIZE(m)), m)
#define REMAT_DETAIL_MEMBER_TYPE(m) BOOST_PP_TUPLE_ENUM(BOOST_PP_TUPLE_POP_BACK(m))
#define REMAT_DETAIL_PARAM_DEFAULT(r, data, i, m) BOOST_PP_COMMA_IF(i) class BOOST_PP_CAT(M, i) = REMAT_DETAIL_MEMBER_TYPE(m)
#define REMAT_DETAIL_PARAM(r, data, i, m) BOOST_PP_COMMA_IF(i) class BOOST_PP_CAT(M, i)
#define REMAT_DETAIL_REFLECTED(r, data, i, m) BOOST_PP_COMMA_IF(i)(BOOST_PP_CAT(M, i), REMAT_DETAIL_MEMBER_NAME(m))

#define REMAT_DETAIL_MODEL(Name, seq)                                                          \
    template <BOOST_PP_SEQ_FOR_EACH_I(REMAT_DETAIL_PARAM_DEFAULT, _, seq)>                     \
    struct Basic##Name;                                                                        \
    template <class... Members>                                                                \
    Basic##Name(Members...) -> Basic##Name<Members...>;                                        \
    using Name = Basic##Name<>;                                                                \
    template <BOOST_PP_SEQ_FOR_EACH_I(REMAT_DETAIL_PARAM, _, seq)>                             \
    struct Basic##Name {                                                                       \
        BOOST_HANA_DEFINE_STRUCT(Basic##Name, BOOST_PP_SEQ_FOR_EACH_I(REMAT_DETAIL_REFLECTED, _, seq));

// REMAT_MODEL(Name, (Type, member)...): see above. The struct's body follows; close it with `};`.
#define REMAT_MODEL(Name, ...) REMAT_DETAIL_MODEL(Name, BOOST_PP_VARIADIC_TO_SEQ(__VA_ARGS__))
