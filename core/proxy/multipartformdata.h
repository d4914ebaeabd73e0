#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <optional>

namespace loopscope {

// One part of a multipart/form-data body.
struct MultipartPart {
    QString name;     // the form field name
    QString fileName; // set for file fields (may be empty: then not a file)
    QByteArray contentType;
    QByteArray data;
    bool isFile = false; // a filename parameter was present
};

// Parses multipart/form-data (RFC 7578) request bodies, e.g. the Containers API's file upload.
// Hand-written because Qt 6.4 has QHttpMultiPart for building bodies but nothing that parses
// one. Strict: a body that does not follow the framing is refused with a readable reason.
class MultipartFormData {
public:
    // The boundary of a `multipart/form-data; boundary=…` Content-Type, or nullopt.
    static std::optional<QByteArray> boundaryOf(const QByteArray &contentType);
    // All parts, in order, or nullopt with `error` set. Each part's data shares `body`'s memory
    // (no copy; it keeps the body alive) and, like QByteArray::fromRawData, has no '\0' after it.
    static std::optional<QList<MultipartPart>> parse(const QByteArray &body,
                                                     const QByteArray &boundary, QString *error);
};

} // namespace loopscope
