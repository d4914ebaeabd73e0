#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace loopscope {

// One pass over a request body that tells, without building it, whether it is a JSON object
// QJsonDocument accepts, and where its top-level members lie. Pass-through only needs a few
// top-level keys ("model", the control keys, "tools"); parsing a whole 1 MB body to read them
// took ~2.4 ms on the proxy thread, this scan a fraction of that (docs/benchmarks.md, issue 34).
//
// It is strict (RFC 8259) and conservative: anything it is not sure QJsonDocument reads the
// same way (invalid or unusual UTF-8, \u0000, a lone surrogate escape, huge numbers or
// exponents, deep nesting, an escaped or repeated top-level key, too many top-level keys) makes
// scan() return nothing, and the caller parses the body whole as before — so an answer,
// including every error message, is the same either way.
class RequestBodyScan {
public:
    struct Member {
        QByteArrayView key;   // as written, without its quotes (never holds an escape)
        QByteArrayView value; // the value's JSON text
    };

    // Views into `body`, which must outlive the scan.
    static std::optional<RequestBodyScan> scan(QByteArrayView body);

    const QList<Member> &members() const { return m_members; }
    // The member's JSON text, empty when absent.
    QByteArrayView value(QByteArrayView key) const;
    // The member's string when it is one written without escapes, else a null QString.
    QString plainString(QByteArrayView key) const;
    // The object without the members named in `omitted`, parsed (they are small: a body's
    // bulk is its conversation). Null when QJsonDocument refuses it after all.
    std::optional<QJsonObject> objectWithout(const QList<QByteArrayView> &omitted) const;

private:
    QList<Member> m_members;
};

} // namespace loopscope
