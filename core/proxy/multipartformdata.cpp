#include "proxy/multipartformdata.h"

namespace loopscope {

namespace {

constexpr qsizetype kMaxParts = 64;
constexpr qsizetype kMaxHeaderBytes = 16 * 1024;

// The value of `key` in a header's parameters (`form-data; name="file"; filename="a.csv"`).
std::optional<QByteArray> parameter(const QByteArray &header, const QByteArray &key) {
    qsizetype i = 0;
    while (i < header.size()) {
        const qsizetype semi = header.indexOf(';', i);
        if (semi < 0)
            return std::nullopt;
        i = semi + 1;
        while (i < header.size() && header.at(i) == ' ')
            ++i;
        const qsizetype eq = header.indexOf('=', i);
        if (eq < 0)
            return std::nullopt;
        const QByteArray name = header.mid(i, eq - i).trimmed().toLower();
        qsizetype v = eq + 1;
        QByteArray value;
        if (v < header.size() && header.at(v) == '"') {
            ++v;
            while (v < header.size() && header.at(v) != '"') {
                if (header.at(v) == '\\' && v + 1 < header.size())
                    ++v;
                value.append(header.at(v));
                ++v;
            }
            ++v; // closing quote
        } else {
            const qsizetype end = header.indexOf(';', v);
            value = header.mid(v, end < 0 ? -1 : end - v).trimmed();
            v = end < 0 ? header.size() : end;
        }
        if (name == key)
            return value;
        i = v;
    }
    return std::nullopt;
}

// `length` bytes of `whole` from `pos`, sharing its memory: an upload's file part is most of the
// body, and a copy (`mid`) would hold it twice. The slice keeps the body's block alive (reference
// counted, like any QByteArray copy) and detaches on the first write; Qt 6.4 has no public
// sharing slice, but QByteArray's DataPointer constructor is public and its begin and size may
// point anywhere inside the block.
QByteArray sharedSlice(const QByteArray &whole, qsizetype pos, qsizetype length) {
    QByteArray shared = whole; // a counted reference, no copy
    QByteArray::DataPointer slice = shared.data_ptr();
    slice.ptr += pos;
    slice.size = length;
    return QByteArray(std::move(slice));
}

} // namespace

std::optional<QByteArray> MultipartFormData::boundaryOf(const QByteArray &contentType) {
    const QByteArray type = contentType.left(contentType.indexOf(';')).trimmed().toLower();
    if (type != "multipart/form-data")
        return std::nullopt;
    std::optional<QByteArray> boundary = parameter(contentType, "boundary");
    if (!boundary || boundary->isEmpty() || boundary->size() > 70)
        return std::nullopt;
    return boundary;
}

std::optional<QList<MultipartPart>>
MultipartFormData::parse(const QByteArray &body, const QByteArray &boundary, QString *error) {
    const auto fail = [error](const QString &why) -> std::optional<QList<MultipartPart>> {
        if (error)
            *error = QStringLiteral("malformed multipart/form-data body: ") + why;
        return std::nullopt;
    };
    const QByteArray delimiter = QByteArray("--") + boundary;
    const QByteArray partEnd = QByteArray("\r\n") + delimiter;
    qsizetype pos = body.indexOf(delimiter);
    if (pos < 0)
        return fail(QStringLiteral("the boundary never occurs"));
    QList<MultipartPart> parts;
    while (true) {
        pos += delimiter.size();
        if (body.mid(pos, 2) == "--")
            break; // the closing delimiter
        if (body.mid(pos, 2) != "\r\n")
            return fail(QStringLiteral("a boundary line does not end in CRLF"));
        pos += 2;
        const qsizetype headerEnd = body.indexOf("\r\n\r\n", pos);
        if (headerEnd < 0 || headerEnd - pos > kMaxHeaderBytes)
            return fail(QStringLiteral("a part has no end of headers"));
        MultipartPart part;
        bool haveDisposition = false;
        for (const QByteArray &line : body.mid(pos, headerEnd - pos).split('\n')) {
            const QByteArray trimmed = line.trimmed();
            if (trimmed.isEmpty())
                continue;
            const qsizetype colon = trimmed.indexOf(':');
            if (colon <= 0)
                return fail(QStringLiteral("a part header has no name"));
            const QByteArray name = trimmed.left(colon).trimmed().toLower();
            const QByteArray value = trimmed.mid(colon + 1).trimmed();
            if (name == "content-disposition") {
                if (!value.toLower().startsWith("form-data"))
                    return fail(QStringLiteral("a part is not form-data"));
                haveDisposition = true;
                part.name = QString::fromUtf8(parameter(value, "name").value_or(QByteArray()));
                if (const auto fileName = parameter(value, "filename")) {
                    part.isFile = true;
                    part.fileName = QString::fromUtf8(*fileName);
                }
            } else if (name == "content-type") {
                part.contentType = value;
            }
        }
        if (!haveDisposition || part.name.isEmpty())
            return fail(QStringLiteral("a part has no Content-Disposition name"));
        const qsizetype dataStart = headerEnd + 4;
        const qsizetype next = body.indexOf(partEnd, dataStart);
        if (next < 0)
            return fail(QStringLiteral("the body ends without a closing boundary"));
        part.data = sharedSlice(body, dataStart, next - dataStart);
        parts.append(part);
        if (parts.size() > kMaxParts)
            return fail(QStringLiteral("more than %1 parts").arg(kMaxParts));
        pos = next + 2;
    }
    return parts;
}

} // namespace loopscope
