#pragma once

#include <QString>

namespace loopscope {

// 128 bits from the system's CSPRNG as 32 lowercase hex digits: the random part of every id
// Loopscope mints (sandbox keys, call and item ids).
QString randomHex128();

} // namespace loopscope
