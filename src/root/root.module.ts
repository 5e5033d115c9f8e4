import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { RootController } from './root.controller.js';
import { RootService } from './root.service.js';

/** The service's root, `GET /` (docs/versioning.md#the-root). */
@Module({ imports: [DiscoveryModule], controllers: [RootController], providers: [RootService] })
export class RootModule {}
