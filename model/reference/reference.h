// The CPU reference: every op written from the math, and (later) a whole-model forward.
#pragma once
#include "reference/attention.h"
#include "reference/copy.h"
#include "reference/elementwise.h"
#include "reference/linear_attention.h"
#include "reference/matmul.h"
#include "reference/moe.h"
#include "reference/position.h"
#include "reference/quant.h"
#include "reference/state_space.h"
