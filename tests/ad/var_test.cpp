#include <doctest/doctest.h>

#include "remat/ad/var.hpp"

using namespace remat;

TEST_CASE("Var::item") {
    CHECK(Var(Tensor(2.5f)).item() == 2.5f);
    CHECK(item(Var(Tensor{7.0f})) == 7.0f);  // shape (1,) has one element too
    CHECK_THROWS_WITH_AS(Var(zeros(Shape{2, 3})).item(), "item: expected a value with one element, got shape (2, 3)",
                         ShapeError);
    CHECK_THROWS_AS(Var().item(), ValueError);
}
