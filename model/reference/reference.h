// The CPU reference: every op written from the math, and (later) a whole-model forward.
#pragma once
#include "reference/elementwise.h"
#include "reference/copy.h"
#include "reference/position.h"
#include "reference/matmul.h"
#include "reference/quant.h"
#include "reference/attention.h"
