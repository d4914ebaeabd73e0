#pragma once

#include <QString>

#include <utility>

namespace loopscope {

// A value or a readable failure. Sandbox work crosses the event loop through QFuture, and
// exceptions must not, so failures travel as data.
template<typename T> struct Outcome {
    T value{};
    QString error; // empty on success

    bool ok() const { return error.isEmpty(); }

    static Outcome success(T v) { return Outcome{std::move(v), {}}; }
    static Outcome failure(QString message) {
        Outcome o;
        o.error =
            message.isEmpty() ? QStringLiteral("unknown sandbox failure") : std::move(message);
        return o;
    }
};

} // namespace loopscope
