#include "sandbox/sandboxfilecode.h"

#include "sandbox/sandboxbackend.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace loopscope {

namespace {

const QString kMarker = QStringLiteral("\x1eLOOPSCOPE-FILES ");

// Shared prelude: `_p` maps a /mnt/data path to a checked real path; `_out` prints the answer.
QString snippet(const QString &body) {
    QString inner = QStringLiteral("import os, json, base64\n"
                                   "R = os.path.realpath('/mnt/data')\n"
                                   "def _p(p):\n"
                                   "    l = os.path.realpath(p)\n"
                                   "    if not l.startswith(R + os.sep):\n"
                                   "        raise ValueError('path must be under /mnt/data')\n"
                                   "    return l\n"
                                   "def _out(v):\n"
                                   "    print(%1 + json.dumps(v))\n"
                                   "try:\n")
                        .arg(QStringLiteral("'\\x1eLOOPSCOPE-FILES '"));
    for (const QString &line : body.split(u'\n', Qt::SkipEmptyParts))
        inner += QStringLiteral("    ") + line + u'\n';
    inner += QStringLiteral("except BaseException as e:\n"
                            "    _out({'error': type(e).__name__ + ': ' + str(e)})\n");
    // Run in a dict of its own: nothing leaks into the user's namespace.
    return QStringLiteral("exec(__import__('base64').b64decode('%1').decode(), {})\n")
        .arg(QString::fromLatin1(inner.toUtf8().toBase64()));
}

QString quoted(const QString &text) {
    return QString::fromUtf8(QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact))
        .mid(1)
        .chopped(1);
}

SandboxFileInfo infoFrom(const QJsonObject &o) {
    return SandboxFileInfo{o.value(QStringLiteral("path")).toString(),
                           o.value(QStringLiteral("bytes")).toInteger(),
                           o.value(QStringLiteral("mtime_ms")).toInteger()};
}

} // namespace

QString SandboxFileCode::setupCode() {
    // Tolerant: a kernel that may not create /mnt/data keeps its own directory.
    return QStringLiteral("import os as _os\ntry:\n    _os.makedirs('/mnt/data', exist_ok=True)\n"
                          "    _os.chdir('/mnt/data')\nexcept OSError:\n    pass\ndel _os\n");
}

QString SandboxFileCode::listCode() {
    return snippet(QStringLiteral(
        "files = []\n"
        "for d, dirs, names in os.walk(R):\n"
        "    for n in sorted(names):\n"
        "        f = os.path.join(d, n)\n"
        "        if os.path.isfile(f) and not os.path.islink(f):\n"
        "            st = os.stat(f)\n"
        "            files.append({'path': '/mnt/data/' + os.path.relpath(f, R), 'bytes': "
        "st.st_size, 'mtime_ms': int(st.st_mtime * 1000)})\n"
        "_out({'files': files[:1000]})"));
}

QString SandboxFileCode::readCode(const QString &path) {
    return snippet(QStringLiteral("_out({'data': base64.b64encode(open(_p(%1), "
                                  "'rb').read()).decode()})")
                       .arg(quoted(path)));
}

QString SandboxFileCode::writeCode(const QString &path, const QByteArray &data) {
    return snippet(QStringLiteral("l = _p(%1)\n"
                                  "os.makedirs(os.path.dirname(l), exist_ok=True)\n"
                                  "open(l, 'wb').write(base64.b64decode('%2'))\n"
                                  "st = os.stat(l)\n"
                                  "_out({'path': %1, 'bytes': st.st_size, 'mtime_ms': "
                                  "int(st.st_mtime * 1000)})")
                       .arg(quoted(path), QString::fromLatin1(data.toBase64())));
}

QString SandboxFileCode::deleteCode(const QString &path) {
    return snippet(QStringLiteral("os.remove(_p(%1))\n_out({'deleted': True})").arg(quoted(path)));
}

Outcome<QJsonValue> SandboxFileCode::parse(const ExecutionResult &result) {
    const qsizetype at = result.stdoutText.lastIndexOf(kMarker);
    if (at < 0) {
        return Outcome<QJsonValue>::failure(
            result.error ? result.error->name + QStringLiteral(": ") + result.error->value
                         : QStringLiteral("the sandbox gave no answer to a file operation"));
    }
    const QString line = result.stdoutText.mid(at + kMarker.size()).section(u'\n', 0, 0);
    const QJsonObject answer = QJsonDocument::fromJson(line.toUtf8()).object();
    if (answer.contains(QStringLiteral("error")))
        return Outcome<QJsonValue>::failure(answer.value(QStringLiteral("error")).toString());
    return Outcome<QJsonValue>::success(answer);
}

QFuture<Outcome<QList<SandboxFileInfo>>> SandboxFileCode::list(SandboxBackend *backend,
                                                               const SandboxHandle &sandbox,
                                                               const SandboxParams &params) {
    return backend->run(sandbox, listCode(), params).then([](const Outcome<ExecutionResult> &ran) {
        using R = Outcome<QList<SandboxFileInfo>>;
        if (!ran.ok())
            return R::failure(ran.error);
        const Outcome<QJsonValue> answer = parse(ran.value);
        if (!answer.ok())
            return R::failure(answer.error);
        QList<SandboxFileInfo> files;
        for (const QJsonValue &f : answer.value[QStringLiteral("files")].toArray())
            files.append(infoFrom(f.toObject()));
        return R::success(files);
    });
}

QFuture<Outcome<QByteArray>> SandboxFileCode::read(SandboxBackend *backend,
                                                   const SandboxHandle &sandbox,
                                                   const QString &path,
                                                   const SandboxParams &params) {
    return backend->run(sandbox, readCode(path), params)
        .then([](const Outcome<ExecutionResult> &ran) {
            if (!ran.ok())
                return Outcome<QByteArray>::failure(ran.error);
            const Outcome<QJsonValue> answer = parse(ran.value);
            if (!answer.ok())
                return Outcome<QByteArray>::failure(answer.error);
            return Outcome<QByteArray>::success(
                QByteArray::fromBase64(answer.value[QStringLiteral("data")].toString().toLatin1()));
        });
}

QFuture<Outcome<SandboxFileInfo>>
SandboxFileCode::write(SandboxBackend *backend, const SandboxHandle &sandbox, const QString &path,
                       const QByteArray &data, const SandboxParams &params) {
    return backend->run(sandbox, writeCode(path, data), params)
        .then([](const Outcome<ExecutionResult> &ran) {
            if (!ran.ok())
                return Outcome<SandboxFileInfo>::failure(ran.error);
            const Outcome<QJsonValue> answer = parse(ran.value);
            if (!answer.ok())
                return Outcome<SandboxFileInfo>::failure(answer.error);
            return Outcome<SandboxFileInfo>::success(infoFrom(answer.value.toObject()));
        });
}

QFuture<Outcome<bool>> SandboxFileCode::remove(SandboxBackend *backend,
                                               const SandboxHandle &sandbox, const QString &path,
                                               const SandboxParams &params) {
    return backend->run(sandbox, deleteCode(path), params)
        .then([](const Outcome<ExecutionResult> &ran) {
            if (!ran.ok())
                return Outcome<bool>::failure(ran.error);
            const Outcome<QJsonValue> answer = parse(ran.value);
            return answer.ok() ? Outcome<bool>::success(true)
                               : Outcome<bool>::failure(answer.error);
        });
}

} // namespace loopscope
