# One image for every Bindery service; BINDERY_SERVICES picks which ones a container runs.
FROM node:20-bookworm-slim
RUN npm install -g pnpm@10.34.9
WORKDIR /app
COPY . .
RUN pnpm install --frozen-lockfile
ENV NODE_ENV=production DATA_DIR=/data
EXPOSE 8080
CMD ["node", "--import", "tsx", "embedded/src/service.ts"]
