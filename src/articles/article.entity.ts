import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { Tag } from '../tags/tag.entity.js';
import { User } from '../users/user.entity.js';

/** Article statuses of SPEC §6; transitions in ARTICLE_TRANSITIONS. */
export const ARTICLE_STATUSES = ['draft', 'published', 'archived'] as const;
export type ArticleStatus = (typeof ARTICLE_STATUSES)[number];

/** The status changes SPEC §6 allows, from → to; `archived` is final. Staying in a status is no change. */
export const ARTICLE_TRANSITIONS: Readonly<Record<ArticleStatus, readonly ArticleStatus[]>> = {
  draft: ['published', 'archived'],
  published: ['draft', 'archived'],
  archived: [],
};

/** An article (SPEC §6 articles). Deleted with its author; its tags are in `article_tags`. */
@Entity('articles')
@Index(['author_id', 'id'])
export class Article {
  @PrimaryGeneratedColumn()
  id: number;

  @Index()
  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'text', default: '' })
  body: string;

  @Index()
  @Column({ type: 'varchar', length: 16, default: 'draft' })
  status: ArticleStatus;

  @Column({ type: 'integer' })
  author_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'author_id' })
  author?: Relation<User>;

  /** Set on the first publication; kept when unpublished or archived. */
  @Index()
  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  published_at: Date | null;

  @Index()
  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  @Index()
  @Column({ type: TIMESTAMP_TYPE })
  updated_at: Date;
}

/** Join table of articles and tags; rows go with either side. */
@Entity('article_tags')
export class ArticleTag {
  @PrimaryColumn({ type: 'integer' })
  article_id: number;

  @Index()
  @PrimaryColumn({ type: 'integer' })
  tag_id: number;

  @ManyToOne(() => Article, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'article_id' })
  article?: Relation<Article>;

  @ManyToOne(() => Tag, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tag_id' })
  tag?: Relation<Tag>;
}
