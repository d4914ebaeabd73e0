// MultipartFormData (the Containers API's file upload): the first line of the input is the
// Content-Type, the rest the body. Invariants: a parsed body has 1..64 named parts whose data are
// slices of the body; the same parts written back with the same boundary parse to the same parts
// (when they can be written: names without quotes or line breaks, data without the delimiter).
#include "fuzzsupport.h"
#include "proxy/multipartformdata.h"

using loopscope::MultipartFormData;
using loopscope::MultipartPart;
using loopscope::fuzz::FuzzInput;

namespace {

bool writable(const MultipartPart &part, const QByteArray &boundary) {
    const auto plain = [](const QByteArray &text) {
        return !text.contains('"') && !text.contains('\\') && !text.contains('\r') &&
               !text.contains('\n');
    };
    return plain(part.name.toUtf8()) && plain(part.fileName.toUtf8()) &&
           !part.contentType.contains('\r') && !part.contentType.contains('\n') &&
           !part.data.contains(QByteArray(QByteArray("\r\n--") + boundary));
}

QByteArray write(const QList<MultipartPart> &parts, const QByteArray &boundary) {
    QByteArray body;
    for (const MultipartPart &part : parts) {
        body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" +
                part.name.toUtf8() + '"';
        if (part.isFile)
            body += "; filename=\"" + part.fileName.toUtf8() + '"';
        body += "\r\n";
        if (!part.contentType.isEmpty())
            body += "Content-Type: " + part.contentType + "\r\n";
        body += "\r\n" + part.data + "\r\n";
    }
    return body + "--" + boundary + "--\r\n";
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const QByteArray all = FuzzInput(data, size).all();
    const qsizetype newline = all.indexOf('\n');
    const QByteArray contentType = newline < 0 ? all : all.left(newline);
    const QByteArray body = newline < 0 ? QByteArray() : all.mid(newline + 1);
    const QByteArray boundary = MultipartFormData::boundaryOf(contentType).value_or("XyZ");
    FUZZ_CHECK(!boundary.isEmpty() && boundary.size() <= 70);

    QString error;
    const auto parts = MultipartFormData::parse(body, boundary, &error);
    if (!parts) {
        FUZZ_CHECK(error.startsWith(QStringLiteral("malformed multipart/form-data body: ")));
        return 0;
    }
    FUZZ_CHECK(parts->size() <= 64);
    bool allWritable = true;
    for (const MultipartPart &part : *parts) {
        FUZZ_CHECK(!part.name.isEmpty());
        FUZZ_CHECK(part.data.size() <= body.size() && body.contains(part.data));
        FUZZ_CHECK(part.isFile || part.fileName.isEmpty());
        allWritable = allWritable && writable(part, boundary);
    }
    if (!allWritable || parts->isEmpty())
        return 0;
    QString again;
    const auto reparsed = MultipartFormData::parse(write(*parts, boundary), boundary, &again);
    FUZZ_CHECK(reparsed.has_value());
    FUZZ_CHECK(reparsed->size() == parts->size());
    for (qsizetype i = 0; i < parts->size(); ++i) {
        const MultipartPart &a = parts->at(i);
        const MultipartPart &b = reparsed->at(i);
        FUZZ_CHECK(a.name == b.name && a.fileName == b.fileName && a.isFile == b.isFile);
        FUZZ_CHECK(a.contentType == b.contentType && a.data == b.data);
    }
    return 0;
}
