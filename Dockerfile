# One image for every Wharf process; the compose file picks the command.

# The web console (docs/CONSOLE.md), which the api embeds: npm ci from the
# lockfile, types from the OpenAPI document, vue-tsc, vite build (into
# /src/api/console/files/app, as in a checkout).
FROM node:24.21.0-bookworm-slim AS console
WORKDIR /src/console
COPY console/package.json console/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY console/ ./
RUN npm run build

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
COPY --from=console /src/api/console/files/app api/console/files/app
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/...

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home /data wharf \
 && mkdir -p /data/storage && chown -R wharf /data
COPY --from=build /out/ /usr/local/bin/
USER wharf
ENV STORAGE_DIR=/data/storage HTTP_ADDR=:8080
EXPOSE 8080
CMD ["api"]
