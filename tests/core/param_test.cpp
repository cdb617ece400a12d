// A Param's tensor stays where it is while the Param moves: what the tape and checkpoints rely on.
#include <doctest/doctest.h>

#include <vector>

#include "remat/core/param.hpp"

using namespace remat;

TEST_CASE("Param") {
    SUBCASE("moving keeps the tensor object and its storage") {
        Param a{full(Shape{3}, 2.0f)};
        const Tensor* object = &a.value;
        const float* storage = a.value.data();
        Param b = std::move(a);
        CHECK(&b.value == object);
        CHECK(b.value.data() == storage);
        std::vector<Param> ps;
        ps.push_back(std::move(b));
        for (int i = 0; i < 10; ++i) ps.emplace_back(zeros(Shape{1}));  // reallocates
        CHECK(&ps[0].value == object);
    }
    SUBCASE("move assignment takes the other parameter's tensor") {
        Param a{full(Shape{3}, 2.0f)}, b{zeros(Shape{2}), true};
        const Tensor* object = &a.value;
        b = std::move(a);
        CHECK(&b.value == object);
        CHECK_FALSE(b.frozen);
        a = Param{zeros(Shape{4})};  // a moved-from Param is reused by assigning to it
        CHECK(a.size() == 4);
        CHECK(b.size() == 3);
    }
    SUBCASE("copies are new parameters; copy assignment keeps the tensor object") {
        Param a{full(Shape{3}, 2.0f)};
        Param b = a;
        CHECK(&b.value != &a.value);
        b.value(0) = 5.0f;
        CHECK(a.value(0) == 2.0f);
        const Tensor* object = &b.value;
        b = a;
        CHECK(&b.value == object);
        CHECK(b.value(0) == 2.0f);
    }
    SUBCASE("built as the aggregate was") {
        Param p{zeros(Shape{2}), true};
        CHECK(p.frozen);
        Param q;
        CHECK_FALSE(q.frozen);
    }
}
